package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// testPeerRows: rows of a table spread over three uploads (two "devices'"
// own rows and a replica set) and found through a RowTable gather exactly
// the plain table's rows, for widths that take the 4-byte and the 16-byte
// path (and an output view off 16 bytes); rows past the live count are
// untouched; the stats add one row per live id under the kind its table
// entry names, across calls. A captured gather (where the backend
// captures) reads the live count and ids as they are at each replay. A
// bfloat16 table is refused, and an id outside the table is an error.
func testPeerRows(e *env) {
	pr := e.peerRows()
	const rows, cp, live = 70, 48, 37
	for _, dim := range []int{1, 3, 16, 33, 64} {
		feat := e.randF32(rows*dim, 10)
		at, index, kind, sets := e.randomPlacement(rows, 1, [3]uint8{backend.RowLocal, backend.RowRemote, backend.RowReplica})
		var ups []backend.Rows
		for _, ids := range sets {
			r, err := pr.UploadRows(feat, dim, ids)
			if err != nil {
				e.t.Fatalf("UploadRows: %v", err)
			}
			if r.Rows() != len(ids) || r.Dim() != dim {
				e.t.Fatalf("UploadRows: %d rows of %d, want %d of %d", r.Rows(), r.Dim(), len(ids), dim)
			}
			ups = append(ups, r)
		}
		tab, err := pr.RowTable(rows, ups, at, index, kind)
		if err != nil {
			e.t.Fatalf("RowTable: %v", err)
		}
		if tab.NumRows() != rows || tab.Dim() != dim {
			e.t.Fatalf("RowTable: %d rows of %d, want %d of %d", tab.NumRows(), tab.Dim(), rows, dim)
		}
		ids := make([]int32, cp)
		for i := range ids {
			ids[i] = int32(e.rnd.IntN(rows))
			if i >= live {
				ids[i] = 1 << 30 // past the count: must not be read
			}
		}
		stats := e.upload([]int64{5, 7, 11})
		want := [3]int64{5, 7, 11}
		for _, offset := range []int{0, 1} {
			what := fmt.Sprintf("GatherRows dim=%d out offset %d", dim, offset)
			const sentinel = -7.5
			whole := e.alloc(backend.F32, cp*dim+offset, sentinel)
			out := e.be.View(whole, offset, cp*dim)
			pr.GatherRows(tab, e.upload(ids), e.count(live, cp), out, stats)
			ref := make([]float32, cp*dim)
			for i := range cp {
				for j := range dim {
					ref[i*dim+j] = sentinel
					if i < live {
						ref[i*dim+j] = feat[int(ids[i])*dim+j]
					}
				}
			}
			for _, v := range ids[:live] {
				want[kind[v]]++
			}
			checkEqual(e.t, what, e.readF32(out, cp*dim), ref, dim)
			e.checkCounts(what, stats, want[:])
		}
		// Without stats: the same rows.
		out := e.poison(cp * dim)
		pr.GatherRows(tab, e.upload(ids), e.count(live, cp), out, nil)
		ref := gatherRef(feat, ids[:live], dim)
		checkEqual(e.t, fmt.Sprintf("GatherRows dim=%d without stats", dim), e.readF32(out, live*dim), ref, dim)
		if cap, ok := e.be.(backend.Capturer); ok {
			capturedPeerRows(e, cap, pr, tab, feat, dim, kind)
		}
		pr.FreeRowTable(tab)
		for _, r := range ups {
			pr.FreeRows(r)
		}
		e.sync()
	}
	if _, err := pr.UploadRows(make([]uint16, 8), 2, []int32{0}); err == nil {
		e.t.Errorf("UploadRows of a bfloat16 table: no error")
	}
	// An id outside the table is an error.
	r, err := pr.UploadRows([]float32{1, 2, 3, 4}, 2, []int32{1, 0})
	if err != nil {
		e.t.Fatalf("UploadRows: %v", err)
	}
	tab, err := pr.RowTable(2, []backend.Rows{r}, []int32{0, 0}, []int32{1, 0}, []uint8{0, 0})
	if err != nil {
		e.t.Fatalf("RowTable: %v", err)
	}
	if _, err := pr.RowTable(2, []backend.Rows{r}, []int32{0, 0}, []int32{1, 2}, []uint8{0, 0}); err == nil {
		e.t.Errorf("RowTable pointing past the rows: no error")
	}
	pr.GatherRows(tab, e.upload([]int32{0, 2}), e.count(2, 2), e.poison(4), nil)
	if err := e.be.Sync(); err == nil {
		e.t.Errorf("GatherRows of id 2 in a table of 2 rows: no error")
	}
}

// capturedPeerRows captures one gather and replays it after changing the
// live count and the ids in place.
func capturedPeerRows(e *env, c backend.Capturer, pr backend.PeerRows, tab backend.RowTable, feat []float32, dim int, kind []uint8) {
	const cp = 20
	rows := len(kind)
	ids := make([]int32, cp)
	idsBuf, n, out, stats := e.upload(ids), e.count(0, cp), e.poison(cp*dim), e.upload([]int64{0, 0, 0})
	rep := e.capture(c, func() { pr.GatherRows(tab, idsBuf, n, out, stats) })
	var want [3]int64
	for _, live := range []int{13, 20} {
		for i := range ids {
			ids[i] = int32(e.rnd.IntN(rows))
		}
		e.be.Write(idsBuf, 0, ids)
		e.be.Write(n.Buf, n.Off, []int32{int32(live)})
		rep.Launch()
		ref := gatherRef(feat, ids[:live], dim)
		for _, v := range ids[:live] {
			want[kind[v]]++
		}
		what := fmt.Sprintf("captured GatherRows dim=%d live=%d", dim, live)
		checkEqual(e.t, what, e.readF32(out, live*dim), ref, dim)
		e.checkCounts(what, stats, want[:])
	}
}
