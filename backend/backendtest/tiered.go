package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// testGatherTiered: rows come from the cache where a vertex has a slot and
// from the host tier (backend.UploadHost) elsewhere, rows past the live
// count are left alone, and the stats count host rows and all rows, adding
// up across calls. Without a cache every row comes from the host.
func testGatherTiered(e *env) {
	for _, dim := range []int{1, 3, 16, 33} {
		const rows, cp, live, cached = 50, 40, 29, 12
		hostVals := e.randF32(rows*dim, 10)
		hb, err := backend.UploadHost(e.be, append([]float32(nil), hostVals...))
		if err != nil {
			e.t.Fatalf("UploadHost: %v", err)
		}
		slot := make([]int32, rows)
		cacheVals := e.randF32(cached*dim, 10)
		for v := range slot {
			slot[v] = -1
		}
		for s, v := range e.rnd.Perm(rows)[:cached] {
			slot[v] = int32(s)
		}
		ids := make([]int32, cp)
		for i := range ids {
			ids[i] = int32(e.rnd.IntN(rows))
			if i >= live {
				ids[i] = 1 << 30 // past the count: must not be read
			}
		}
		stats := e.upload([]int64{5, 7})
		for _, withCache := range []bool{true, false} {
			out := e.poison(cp * dim)
			var cache backend.Buffer
			sl := append([]int32(nil), slot...)
			if withCache {
				cache = e.upload(cacheVals)
			} else {
				for v := range sl {
					sl[v] = -1
				}
			}
			e.tiered().GatherTiered(cache, e.upload(sl), hb, dim, e.upload(ids), e.count(live, cp), out, stats)
			want := make([]float32, live*dim)
			misses := 0
			for i := range live {
				v := ids[i]
				if s := sl[v]; s >= 0 {
					copy(want[i*dim:(i+1)*dim], cacheVals[int(s)*dim:])
				} else {
					copy(want[i*dim:(i+1)*dim], hostVals[int(v)*dim:])
					misses++
				}
			}
			what := fmt.Sprintf("GatherTiered dim=%d cache=%t", dim, withCache)
			checkEqual(e.t, what, e.readF32(out, live*dim), want, dim)
			got := make([]int64, 2)
			e.be.Read(got, stats, 0)
			e.sync()
			if got[0] != 5+int64(misses) || got[1] != 7+live {
				e.t.Fatalf("%s: stats %v, want [%d %d]", what, got, 5+misses, 7+live)
			}
			e.be.Write(stats, 0, []int64{5, 7})
		}
		e.be.Free(hb)
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
		e.tiered().GatherTiered(cb, e.upload(slot), hb, dim, e.upload(ids), e.count(live, cp), out, nil)
		checkEqual(e.t, fmt.Sprintf("GatherTiered bfloat16 dim=%d", dim), e.readF32(out, live*dim), want, dim)
		for _, b := range []backend.Buffer{tb, hb, cb} {
			e.be.Free(b)
		}
	}
}
