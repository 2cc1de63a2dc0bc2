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
// without cached rows) and the slot table (slot[v]: v's cache row, or -1).
// With bf16 both tiers hold bfloat16 and the float32 slices their exact
// values.
type tieredTables struct {
	host, cache []float32
	slot        []int32
	hb, cb, sb  backend.Buffer
}

// tieredTables draws the tables of rows vertices, cached of them cached.
func (e *env) tieredTables(rows, cached, dim int, bf16 bool) tieredTables {
	e.t.Helper()
	tt := tieredTables{host: e.randF32(rows*dim, 1), cache: e.randF32(cached*dim, 1), slot: make([]int32, rows)}
	for v := range tt.slot {
		tt.slot[v] = -1
	}
	for s, v := range e.rnd.Perm(rows)[:cached] {
		tt.slot[v] = int32(s)
	}
	var host any = append([]float32(nil), tt.host...)
	if bf16 {
		bits := backend.ToBF16(tt.host)
		tt.host, host = widenBits(bits), bits
	}
	var err error
	if tt.hb, err = backend.UploadHost(e.be, host); err != nil {
		e.t.Fatalf("UploadHost: %v", err)
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

// row is vertex v's row as the store serves it: from the cache where v
// has a slot, else from the host tier.
func (tt *tieredTables) row(v int32, dim int) []float32 {
	if s := tt.slot[v]; s >= 0 {
		return tt.cache[int(s)*dim : int(s+1)*dim]
	}
	return tt.host[int(v)*dim : int(v+1)*dim]
}

func (tt *tieredTables) free(e *env) {
	e.be.Free(tt.hb)
}

// testGatherTieredMisses: the rows of vertices without a slot come from
// the host tier (bfloat16 widened exactly), the rows of cached vertices and
// rows past the live count are not written, and the stats count host rows
// and all rows as GatherTiered's do.
func testGatherTieredMisses(e *env) {
	for _, bf16 := range []bool{false, true} {
		for _, dim := range []int{1, 3, 16, 33} {
			const rows, cp, live, cached = 50, 40, 29, 20
			tt := e.tieredTables(rows, cached, dim, bf16)
			ids := e.liveIDs(rows, cp, live)
			stats := e.upload([]int64{5, 7})
			out := e.poison(cp * dim)
			e.tiered().GatherTieredMisses(tt.sb, tt.hb, dim, e.upload(ids), e.count(live, cp), out, stats)
			what := fmt.Sprintf("GatherTieredMisses dim=%d bfloat16=%t", dim, bf16)
			got := e.readF32(out, cp*dim)
			misses := 0
			for i, v := range ids {
				g := got[i*dim : (i+1)*dim]
				if i < live && tt.slot[v] < 0 {
					misses++
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
			if misses == 0 || misses == live {
				e.t.Fatalf("%s: %d misses of %d rows: the case tests nothing", what, misses, live)
			}
			e.checkCounts(what+": stats", stats, []int64{5 + int64(misses), 7 + live})
			tt.free(e)
		}
	}
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
	}{{120, false, false}, {120, true, false}, {120, false, true}, {120, true, true}, {0, false, false}} {
		for _, dim := range []int{1, 16, 33, 100} {
			name := fmt.Sprintf("AggregateConcatTiered dim=%d cached=%d bfloat16=%t out bfloat16=%t", dim, c.cached, c.bf16, c.bf16Out)
			tt := e.tieredTables(rows, c.cached, dim, c.bf16)
			h, blk, ids := e.tableBlock(rows)
			ew := e.randF32(h.capEdges, 1)
			ewb := e.upload(ew)
			outType := backend.F32
			if c.bf16Out {
				outType = backend.BF16
			}
			n := h.capDst * 2 * dim

			x := e.poison(h.capSrc * dim)
			e.tiered().GatherTiered(tt.cb, tt.sb, tt.hb, dim, blk.SrcIDs, blk.NumSrc, x, nil)
			want := e.alloc(outType, n, math.NaN())
			e.be.AggregateConcat(blk, ewb, x, dim, want)
			misses := e.poison(h.capSrc * dim)
			e.tiered().GatherTieredMisses(tt.sb, tt.hb, dim, blk.SrcIDs, blk.NumSrc, misses, nil)
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
