package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// tieredTables are a tiered store's tables for the cases of the ops that
// read it in place: the host tier (host, [rows, dim], in host memory the
// device reads: backend.UploadHost), the cache (cache, [cached, dim], with
// values of its own, so that a row read from the wrong tier shows; nil
// without cached rows), the band (band, [banded, dim], host memory too,
// values of its own; nil without banded rows) and the slot table (slot[v]:
// v's cache row, -2 - its band row, or -1). With bf16 every tier holds
// bfloat16 and the float32 slices their exact values.
type tieredTables struct {
	host, cache, band []float32
	slot              []int32
	hb, cb, bb, sb    backend.Buffer
}

// tieredTables draws the tables of rows vertices, cached of them cached
// and banded others in the band.
func (e *env) tieredTables(rows, cached, banded, dim int, bf16 bool) tieredTables {
	e.t.Helper()
	tt := tieredTables{host: e.randF32(rows*dim, 1), cache: e.randF32(cached*dim, 1), band: e.randF32(banded*dim, 1), slot: make([]int32, rows)}
	for v := range tt.slot {
		tt.slot[v] = -1
	}
	perm := e.rnd.Perm(rows)
	for s, v := range perm[:cached] {
		tt.slot[v] = int32(s)
	}
	for k, v := range perm[cached : cached+banded] {
		tt.slot[v] = int32(-2 - k)
	}
	tt.hb, tt.host = e.uploadHost(tt.host, bf16)
	if banded > 0 {
		tt.bb, tt.band = e.uploadHost(tt.band, bf16)
	}
	if cached > 0 {
		if bf16 {
			bits := backend.ToBF16(tt.cache)
			tt.cache, tt.cb = widenBits(bits), e.upload(bits)
		} else {
			tt.cb = e.upload(tt.cache)
		}
	}
	tt.sb = e.upload(tt.slot)
	return tt
}

// uploadHost puts vals in host memory the device reads (as bfloat16 with
// bf16), and gives the values it holds.
func (e *env) uploadHost(vals []float32, bf16 bool) (backend.Buffer, []float32) {
	e.t.Helper()
	var data any = append([]float32(nil), vals...)
	if bf16 {
		bits := backend.ToBF16(vals)
		vals, data = widenBits(bits), bits
	}
	b, err := backend.UploadHost(e.be, data)
	if err != nil {
		e.t.Fatalf("UploadHost: %v", err)
	}
	return b, vals
}

// row is vertex v's row as the store serves it: from the cache where v
// has a slot, from the band where its slot says so, else from the host
// tier.
func (tt *tieredTables) row(v int32, dim int) []float32 {
	switch s := int(tt.slot[v]); {
	case s >= 0:
		return tt.cache[s*dim : (s+1)*dim]
	case s <= -2:
		return tt.band[(-2-s)*dim : (-1-s)*dim]
	}
	return tt.host[int(v)*dim : int(v+1)*dim]
}

func (tt *tieredTables) free(e *env) {
	e.be.Free(tt.hb)
	if tt.bb != nil {
		e.be.Free(tt.bb)
	}
}

// testGatherTieredMisses: the rows of vertices without a cache slot come
// from the band or the host tier as their slots say (bfloat16 widened
// exactly), the rows of cached vertices and rows past the live count are
// not written, and the stats count rows of host memory and all rows as
// GatherTiered's do.
func testGatherTieredMisses(e *env) {
	for _, bf16 := range []bool{false, true} {
		for _, dim := range []int{1, 3, 16, 33} {
			for _, banded := range []int{0, 12} {
				const rows, cp, live, cached = 50, 40, 29, 20
				tt := e.tieredTables(rows, cached, banded, dim, bf16)
				what := fmt.Sprintf("GatherTieredMisses dim=%d bfloat16=%t banded=%d", dim, bf16, banded)
				e.checkMisses(what, tt, rows, cp, live, dim)
				tt.free(e)
			}
		}
	}
}

// checkMisses is one case of testGatherTieredMisses.
func (e *env) checkMisses(what string, tt tieredTables, rows, cp, live, dim int) {
	e.t.Helper()
	ids := e.liveIDs(rows, cp, live)
	stats := e.upload([]int64{5, 7})
	out := e.poison(cp * dim)
	e.tiered().GatherTieredMisses(tt.sb, tt.hb, tt.bb, dim, e.upload(ids), e.count(live, cp), out, stats)
	got := e.readF32(out, cp*dim)
	misses, banded := 0, 0
	for i, v := range ids {
		g := got[i*dim : (i+1)*dim]
		if i < live && tt.slot[v] < 0 {
			misses++
			if tt.slot[v] <= -2 {
				banded++
			}
			checkEqual(e.t, fmt.Sprintf("%s: row %d (vertex %d, a miss)", what, i, v), f32bits(g), f32bits(tt.row(v, dim)), dim)
			continue
		}
		for c, x := range g {
			if !math.IsNaN(float64(x)) {
				e.t.Errorf("%s: row %d (cached or past the count) written at %d: %g", what, i, c, x)
				break
			}
		}
	}
	if misses == 0 || misses == live || (tt.bb != nil) != (banded > 0) {
		e.t.Fatalf("%s: %d misses of %d rows, %d of them banded: the case tests nothing", what, misses, live, banded)
	}
	e.checkCounts(what+": stats", stats, []int64{5 + int64(misses), 7 + int64(live)})
}

// testAggregateConcatTiered: reading the sources' rows in place (cached
// rows from the cache, the misses from GatherTieredMisses's rows) writes
// the same bits as GatherTiered followed by AggregateConcat, for float32
// and bfloat16 tiers, float32 and bfloat16 outputs and without a cache; it
// is close to a float64 reference over the rows the store serves; and rows
// past the live destinations are left alone.
func testAggregateConcatTiered(e *env) {
	const rows = 300
	for _, c := range []struct {
		cached        int
		bf16, bf16Out bool
		banded        int
	}{{120, false, false, 0}, {120, true, false, 50}, {120, false, true, 0}, {120, true, true, 50}, {0, false, false, 0}, {0, false, false, 50}} {
		for _, dim := range []int{1, 16, 33, 100} {
			name := fmt.Sprintf("AggregateConcatTiered dim=%d cached=%d banded=%d bfloat16=%t out bfloat16=%t", dim, c.cached, c.banded, c.bf16, c.bf16Out)
			tt := e.tieredTables(rows, c.cached, c.banded, dim, c.bf16)
			h, blk, ids := e.tableBlock(rows)
			ew := e.randF32(h.capEdges, 1)
			ewb := e.upload(ew)
			outType := backend.F32
			if c.bf16Out {
				outType = backend.BF16
			}
			n := h.capDst * 2 * dim

			x := e.poison(h.capSrc * dim)
			e.tiered().GatherTiered(tt.cb, tt.sb, tt.hb, tt.bb, dim, blk.SrcIDs, blk.NumSrc, x, nil)
			want := e.alloc(outType, n, math.NaN())
			e.be.AggregateConcat(blk, ewb, x, dim, want)
			misses := e.poison(h.capSrc * dim)
			e.tiered().GatherTieredMisses(tt.sb, tt.hb, tt.bb, dim, blk.SrcIDs, blk.NumSrc, misses, nil)
			got := e.alloc(outType, n, math.NaN())
			e.tiered().AggregateConcatTiered(blk, ewb, tt.cb, tt.sb, misses, dim, got)
			e.sync()

			live := h.nDst * 2 * dim
			if c.bf16Out {
				g := e.readU16(got, n)
				checkEqual(e.t, name+": against the gathered rows", g[:live], e.readU16(want, live), 2*dim)
				for k, v := range g[live:] {
					if f := backend.BF16Float(v); !math.IsNaN(float64(f)) {
						e.t.Errorf("%s: element %d past the live rows was written (%g)", name, live+k, f)
						break
					}
				}
				tt.free(e)
				continue
			}
			g := e.readF32(got, n)
			checkEqual(e.t, name+": against the gathered rows", f32bits(g[:live]), f32bits(e.readF32(want, live)), 2*dim)
			for k, v := range g[live:] {
				if !math.IsNaN(float64(v)) {
					e.t.Errorf("%s: element %d past the live rows was written (%g)", name, live+k, v)
					break
				}
			}
			ref, scale := tieredConcatRef(h, ew, ids, &tt, dim)
			e.checkClose(name, g[:live], ref, scale, tolSum, 2*dim)
			tt.free(e)
		}
	}
}

// tieredConcatRef is AggregateConcat's float64 reference over the rows the
// store serves source j (tt.row of ids[j]).
func tieredConcatRef(h hostBlock, ew []float32, ids []int32, tt *tieredTables, dim int) (want, scale []float64) {
	xs := make([]float32, h.nSrc*dim)
	for j := range h.nSrc {
		copy(xs[j*dim:(j+1)*dim], tt.row(ids[j], dim))
	}
	return concatRef(h, ew, xs, dim)
}
