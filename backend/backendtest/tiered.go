package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// testGatherTiered: rows come from the cache where a vertex has a slot,
// from the band where its slot names a band row, and from the host tier
// (backend.UploadHost) elsewhere; rows past the live count are left
// alone, and the stats count rows of host memory and all rows, adding up
// across calls. Without a cache or a band every row comes from the others.
func testGatherTiered(e *env) {
	for _, dim := range []int{1, 3, 16, 33} {
		for _, c := range []struct{ cached, banded int }{{12, 0}, {12, 15}, {0, 0}, {0, 15}} {
			const rows, cp, live = 50, 40, 29
			tt := e.tieredTables(rows, c.cached, c.banded, dim, false)
			ids := make([]int32, cp)
			for i := range ids {
				ids[i] = int32(e.rnd.IntN(rows))
				if i >= live {
					ids[i] = 1 << 30 // past the count: must not be read
				}
			}
			stats := e.upload([]int64{5, 7})
			out := e.poison(cp * dim)
			e.tiered().GatherTiered(tt.cb, tt.sb, tt.hb, tt.bb, dim, e.upload(ids), e.count(live, cp), out, stats)
			want := make([]float32, live*dim)
			misses := 0
			for i := range live {
				v := ids[i]
				copy(want[i*dim:(i+1)*dim], tt.row(v, dim))
				if tt.slot[v] < 0 {
					misses++
				}
			}
			what := fmt.Sprintf("GatherTiered dim=%d cached=%d banded=%d", dim, c.cached, c.banded)
			checkEqual(e.t, what, e.readF32(out, live*dim), want, dim)
			e.checkCounts(what+": stats", stats, []int64{5 + int64(misses), 7 + live})
			tt.free(e)
		}
	}
}

// testGatherBF16: bfloat16 tables (Gather, and both tiers of GatherTiered)
// widen to exactly the float32 values of their bits.
func testGatherBF16(e *env) {
	for _, dim := range []int{3, 16} {
		const rows, cp, live, cached = 40, 30, 23, 9
		vals := e.randF32(rows*dim, 10)
		bits := backend.ToBF16(vals)
		ids := make([]int32, cp)
		for i := range ids {
			ids[i] = int32(e.rnd.IntN(rows))
		}
		want := make([]float32, live*dim)
		for i := range live {
			for j := range dim {
				want[i*dim+j] = backend.BF16Float(bits[int(ids[i])*dim+j])
			}
		}
		tb, err := e.be.Upload(append([]uint16(nil), bits...))
		if err != nil {
			e.t.Fatalf("Upload bfloat16: %v", err)
		}
		out := e.poison(cp * dim)
		e.be.Gather(tb, dim, e.upload(ids), e.count(live, cp), out)
		checkEqual(e.t, fmt.Sprintf("Gather bfloat16 dim=%d", dim), e.readF32(out, live*dim), want, dim)
		hb, err := backend.UploadHost(e.be, append([]uint16(nil), bits...))
		if err != nil {
			e.t.Fatalf("UploadHost bfloat16: %v", err)
		}
		slot := make([]int32, rows)
		cache := make([]uint16, cached*dim)
		for v := range slot {
			slot[v] = -1
		}
		for s, v := range e.rnd.Perm(rows)[:cached] {
			slot[v] = int32(s)
			copy(cache[s*dim:(s+1)*dim], bits[v*dim:])
		}
		cb, err := e.be.Upload(cache)
		if err != nil {
			e.t.Fatal(err)
		}
		out = e.poison(cp * dim)
		e.tiered().GatherTiered(cb, e.upload(slot), hb, nil, dim, e.upload(ids), e.count(live, cp), out, nil)
		checkEqual(e.t, fmt.Sprintf("GatherTiered bfloat16 dim=%d", dim), e.readF32(out, live*dim), want, dim)
		for _, b := range []backend.Buffer{tb, hb, cb} {
			e.be.Free(b)
		}
	}
}
