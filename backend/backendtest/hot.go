package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/sample"
)

// testMaskGraph: through a MaskGraph view, masked destinations get no
// neighbours and every other destination gets exactly the neighbours it
// gets from the unmasked graph (package sample's LayerSkip); Relabel works
// on the view; the mask is read when the op runs, so a changed mask takes
// effect in the next sampling.
func testMaskGraph(e *env) {
	for _, fanout := range []int{-1, 3, 10, 40} {
		const live, capDst = 150, 160
		csr, g, dst, key, r := e.sampleCase(live, capDst)
		skip := make([]int32, csr.NumNodes)
		for v := range skip {
			skip[v] = -1
			if e.rnd.IntN(4) == 0 {
				skip[v] = int32(v % 7)
			}
		}
		sb := e.upload(append([]int32(nil), skip...))
		view, err := e.hot().MaskGraph(g, sb)
		if err != nil {
			e.t.Fatalf("MaskGraph: %v", err)
		}
		for round := range 2 {
			name := fmt.Sprintf("MaskGraph fanout=%d round=%d", fanout, round)
			indptr := make([]int32, live+1)
			total := sample.LayerSkip(csr, dst[:live], fanout, key, indptr, nil, 1, skip)
			nbrs := make([]int32, total)
			sample.LayerSkip(csr, dst[:live], fanout, key, indptr, nbrs, 1, skip)
			full := refLayer(csr, dst[:live], fanout, key)
			for i, v := range dst[:live] {
				n := indptr[i+1] - indptr[i]
				if skip[v] >= 0 && n != 0 {
					e.t.Fatalf("%s: reference gives masked vertex %d %d neighbours", name, v, n)
				}
				if skip[v] < 0 {
					checkEqual(e.t, name+" reference against the unmasked sampler", nbrs[indptr[i]:indptr[i+1]], full.nbrs[full.indptr[i]:full.indptr[i+1]], 0)
				}
			}
			blk := e.sampleBlock(view, dst, e.count(live, capDst), fanout, r, total+11, capDst+total+5)
			if got := e.readCount(blk.NumEdges); got != total {
				e.t.Errorf("%s: NumEdges %d, want %d", name, got, total)
			}
			checkEqual(e.t, name+" Indptr", e.readI32(blk.Indptr, live+1), indptr, 0)
			checkEqual(e.t, name+" Nbrs", e.readI32(blk.Nbrs, total), nbrs, 0)
			e.checkRelabel(name, view, blk, csr.NumNodes, dst[:live], nbrs, capDst+total+5)
			// Unmask every other masked vertex for the next round.
			for v := range skip {
				if skip[v] >= 0 && v%2 == 0 {
					skip[v] = -1
				}
			}
			e.be.Write(sb, 0, skip)
		}
	}
}

// testReplaceRows: rows of vertices with a slot are replaced by the
// table's row base + slot (the table in host memory read in place), or
// zeroed without a table; other rows and rows past the live count are not
// touched.
func testReplaceRows(e *env) {
	for _, dim := range []int{1, 5, 32} {
		const n, cp, live, hot, halves = 60, 40, 31, 17, 2
		slot, ids, tableVals, tb := e.hotCase(n, cp, live, hot, halves*hot*dim)
		start := e.randF32(cp*dim, 10)
		for _, tc := range []struct {
			base  int
			table backend.Buffer
		}{{0, tb}, {hot, tb}, {hot, nil}} {
			what := fmt.Sprintf("ReplaceRows dim=%d base=%d table=%t", dim, tc.base, tc.table != nil)
			out := e.upload(append([]float32(nil), start...))
			base := e.count(tc.base, 0)
			e.hot().ReplaceRows(e.upload(slot), tc.table, base, dim, e.upload(ids), e.count(live, cp), out)
			want := append([]float32(nil), start...)
			for i := range live {
				s := slot[ids[i]]
				if s < 0 {
					continue
				}
				row := want[i*dim : (i+1)*dim]
				if tc.table == nil {
					clear(row)
				} else {
					copy(row, tableVals[(tc.base+int(s))*dim:])
				}
			}
			checkEqual(e.t, what, e.readF32(out, cp*dim), want, dim)
		}
		e.be.Free(tb)
	}
}

// hotCase is a case of the hot-row ops: the slot table of hot of n
// vertices, cp ids of which the first live are read, and a table of size
// random values (as a slice and uploaded to be read in place).
func (e *env) hotCase(n, cp, live, hot, size int) (slot, ids []int32, table []float32, tb backend.Buffer) {
	slot, ids, table = e.hotSlots(n, hot), e.liveIDs(n, cp, live), e.randF32(size, 10)
	tb, err := backend.UploadHost(e.be, append([]float32(nil), table...))
	if err != nil {
		e.t.Fatalf("UploadHost: %v", err)
	}
	return slot, ids, table, tb
}

// liveIDs are cp random vertex ids below n, of which the first live are
// read; the others lie outside any slot table.
func (e *env) liveIDs(n, cp, live int) []int32 {
	ids := make([]int32, cp)
	for i := range ids {
		ids[i] = int32(e.rnd.IntN(n))
		if i >= live {
			ids[i] = 1 << 30 // past the count: must not be read
		}
	}
	return ids
}

// testAddRows: the table's row base + slot is added into a column window
// of the rows of vertices with a slot; other rows and columns, and rows
// past the live count, are not touched.
func testAddRows(e *env) {
	for _, w := range []struct{ dim, ld, off int }{{1, 1, 0}, {5, 12, 6}, {32, 64, 32}, {7, 9, 1}} {
		const n, cp, live, hot, halves = 60, 40, 31, 17, 2
		dim := w.dim
		slot, ids, tableVals, tb := e.hotCase(n, cp, live, hot, halves*hot*dim)
		start := e.randF32(cp*w.ld, 10)
		for _, base := range []int{0, hot} {
			what := fmt.Sprintf("AddRows dim=%d ld=%d off=%d base=%d", dim, w.ld, w.off, base)
			out := e.upload(append([]float32(nil), start...))
			e.hot().AddRows(e.upload(slot), tb, e.count(base, 0), dim, e.upload(ids), e.count(live, cp), out, w.ld, w.off)
			want := append([]float32(nil), start...)
			for i := range live {
				s := slot[ids[i]]
				if s < 0 {
					continue
				}
				for c := range dim {
					want[i*w.ld+w.off+c] += tableVals[(base+int(s))*dim+c]
				}
			}
			checkEqual(e.t, what, e.readF32(out, cp*w.ld), want, w.ld)
		}
		e.be.Free(tb)
	}
}

// testScatterAddRows: the rows of hot vertices add into their slot's row
// of the accumulator, twice over two calls; other rows are untouched.
func testScatterAddRows(e *env) {
	for _, dim := range []int{1, 7, 32} {
		const n, cp, live, hot = 60, 40, 33, 20
		slot := e.hotSlots(n, hot)
		ids := make([]int32, cp)
		for i, v := range e.rnd.Perm(n)[:cp] {
			ids[i] = int32(v)
			if i >= live {
				ids[i] = 1 << 30 // past the count: must not be read
			}
		}
		acc0 := e.randF32(hot*dim, 3)
		acc := e.upload(append([]float32(nil), acc0...))
		want := append([]float32(nil), acc0...)
		for round := range 2 {
			src := e.randF32(cp*dim, 5)
			e.hot().ScatterAddRows(e.upload(slot), acc, dim, e.upload(ids), e.count(live, cp), e.upload(src), nil)
			// A set flag adds nothing.
			e.hot().ScatterAddRows(e.upload(slot), acc, dim, e.upload(ids), e.count(live, cp), e.upload(src), e.upload([]int32{1}))
			for i := range live {
				if s := slot[ids[i]]; s >= 0 {
					for c := range dim {
						want[int(s)*dim+c] += src[i*dim+c]
					}
				}
			}
			checkEqual(e.t, fmt.Sprintf("ScatterAddRows dim=%d round %d", dim, round), e.readF32(acc, hot*dim), want, dim)
		}
	}
}

// testAxpy: y += alpha·x, element by element.
func testAxpy(e *env) {
	for _, n := range []int{1, 5, 1000} {
		x, y := e.randF32(n, 2), e.randF32(n, 2)
		yb := e.upload(append([]float32(nil), y...))
		e.hot().Axpy(-0.75, e.upload(x), yb)
		want, scale := make([]float64, n), make([]float64, n)
		for i := range want {
			want[i] = float64(y[i]) - 0.75*float64(x[i])
			scale[i] = math.Abs(float64(y[i])) + 0.75*math.Abs(float64(x[i]))
		}
		// One rounding of y + alpha·x (a fused multiply-add) is at most
		// 2^-24 = 6e-8 of the scale. Measured 5.9e-8 (CPU): 1e-7 is 1.7x,
		// the op being one multiply-add and the analysis exact.
		e.checkClose(fmt.Sprintf("Axpy n=%d", n), e.readF32(yb, n), want, scale, 1e-7, 1)
	}
}

// hotSlots is a slot table of n vertices of which hot random ones have the
// slots 0..hot-1 and the others -1.
func (e *env) hotSlots(n, hot int) []int32 {
	slot := make([]int32, n)
	for v := range slot {
		slot[v] = -1
	}
	for s, v := range e.rnd.Perm(n)[:hot] {
		slot[v] = int32(s)
	}
	return slot
}
