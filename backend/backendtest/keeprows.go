package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// testKeepRows: a table that keeps its gathers' remote rows gives every
// gather exactly the plain table's rows; a remote row the previous gather
// kept (among its first keep rows) is counted as reused, not as a read
// from the peer, and only then; the counts add up to the rows gathered.
func testKeepRows(e *env) {
	pr := e.peerRows()
	const rows, cp, live, keep = 80, 40, 36, 30
	for _, dim := range []int{3, 16} {
		feat := e.randF32(rows*dim, 10)
		var own [2][]int32
		at, index, kind := make([]int32, rows), make([]int32, rows), make([]uint8, rows)
		for v := range rows {
			p := v % 2
			at[v], index[v], kind[v] = int32(p), int32(len(own[p])), []uint8{backend.RowLocal, backend.RowRemote}[p]
			own[p] = append(own[p], int32(v))
		}
		var ups []backend.Rows
		for _, ids := range own {
			r, err := pr.UploadRows(feat, dim, ids)
			if err != nil {
				e.t.Fatalf("UploadRows: %v", err)
			}
			ups = append(ups, r)
		}
		tab, err := pr.RowTable(rows, ups, at, index, kind)
		if err != nil {
			e.t.Fatalf("RowTable: %v", err)
		}
		if err := pr.KeepRows(tab, keep); err != nil {
			e.t.Fatalf("KeepRows: %v", err)
		}
		stats := e.upload([]int64{0, 0, 0, 0})
		var want [4]int64
		kept := map[int32]bool{} // remote vertices the previous gather kept
		for round := range 4 {
			ids := make([]int32, cp)
			for i, v := range e.rnd.Perm(rows)[:cp] {
				ids[i] = int32(v)
				if round > 0 && i%2 == 0 { // half the rows again, at other places
					ids[i] = int32(e.rnd.IntN(rows))
				}
			}
			seen := map[int32]bool{}
			for i := range ids[:live] { // no vertex twice among the live rows
				for seen[ids[i]] {
					ids[i] = (ids[i] + 1) % rows
				}
				seen[ids[i]] = true
			}
			out := e.poison(cp * dim)
			pr.GatherRows(tab, e.upload(ids), e.count(live, cp), out, stats)
			wantRows := make([]float32, live*dim)
			next := map[int32]bool{}
			for i, v := range ids[:live] {
				copy(wantRows[i*dim:(i+1)*dim], feat[int(v)*dim:(int(v)+1)*dim])
				switch {
				case kind[v] == backend.RowLocal:
					want[0]++
				case kept[v]:
					want[3]++
				default:
					want[2]++
				}
				if kind[v] == backend.RowRemote && i < keep {
					next[v] = true
				}
			}
			kept = next
			what := fmt.Sprintf("KeepRows dim=%d round %d", dim, round)
			checkEqual(e.t, what, e.readF32(out, live*dim), wantRows, dim)
			e.checkCounts(what, stats, want[:])
		}
		if want[3] == 0 {
			e.t.Fatalf("dim %d: no row was reused", dim)
		}
		pr.FreeRowTable(tab)
		for _, r := range ups {
			pr.FreeRows(r)
		}
	}
}
