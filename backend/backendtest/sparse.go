package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// hostBlock is a block's host-side contents; sizes are live, caps larger.
type hostBlock struct {
	nDst, nEdges, nSrc int
	capDst, capEdges   int
	capSrc             int
	indptr, indices    []int32
}

// randomBlock draws a block with nDst live destinations (some with no edges,
// some with many) over nSrc sources, with capacities above the live sizes.
func (e *env) randomBlock(nDst, nSrc int) hostBlock {
	h := hostBlock{nDst: nDst, nSrc: nSrc, capDst: nDst + 3, capSrc: nSrc + 5}
	h.indptr = make([]int32, h.capDst+1)
	for i := range nDst {
		deg := e.rnd.IntN(6)
		if e.rnd.IntN(8) == 0 {
			deg = 20 + e.rnd.IntN(20)
		}
		if i == 1 {
			deg = 0
		}
		for range deg {
			h.indices = append(h.indices, int32(e.rnd.IntN(nSrc)))
		}
		h.indptr[i+1] = int32(len(h.indices))
	}
	h.nEdges = len(h.indices)
	h.capEdges = h.nEdges + 7
	for i := nDst + 1; i <= h.capDst; i++ {
		h.indptr[i] = 1 << 30 // past the count: must not be read
	}
	for range h.capEdges - h.nEdges {
		h.indices = append(h.indices, 1<<30)
	}
	return h
}

// upload makes the backend Block (Nbrs and SrcIDs are unused placeholders).
func (e *env) uploadBlock(h hostBlock) *backend.Block {
	return &backend.Block{
		NumDst:   e.count(h.nDst, h.capDst),
		NumEdges: e.count(h.nEdges, h.capEdges),
		NumSrc:   e.count(h.nSrc, h.capSrc),
		Indptr:   e.upload(h.indptr),
		Nbrs:     e.poisonI32(h.capEdges),
		Indices:  e.upload(h.indices),
		SrcIDs:   e.poisonI32(h.capSrc),
	}
}

func testMeanWeights(e *env) {
	h := e.randomBlock(30, 70)
	ew := e.poison(h.capEdges)
	e.be.MeanWeights(e.uploadBlock(h), ew)
	want := make([]float64, h.nEdges)
	for i := range h.nDst {
		lo, hi := h.indptr[i], h.indptr[i+1]
		for k := lo; k < hi; k++ {
			want[k] = 1 / float64(hi-lo)
		}
	}
	e.checkClose("MeanWeights edgeW", e.readF32(ew, h.nEdges), want, nil, tolElem, 0)
}

func testGCNWeights(e *env) {
	h := e.randomBlock(30, 70)
	deg := e.randomDegrees(h)
	ew := e.poison(h.capEdges)
	sw := e.poison(h.capDst)
	e.be.GCNWeights(e.uploadBlock(h), e.upload(deg), ew, sw)
	wantE := make([]float64, h.nEdges)
	wantS := make([]float64, h.nDst)
	for i := range h.nDst {
		di := float64(deg[i]) + 1
		wantS[i] = 1 / di
		lo, hi := h.indptr[i], h.indptr[i+1]
		for k := lo; k < hi; k++ {
			dj := float64(deg[h.indices[k]]) + 1
			wantE[k] = float64(deg[i]) / float64(hi-lo) / math.Sqrt(di*dj)
		}
	}
	e.checkClose("GCNWeights edgeW", e.readF32(ew, h.nEdges), wantE, nil, tolElem, 0)
	e.checkClose("GCNWeights selfW", e.readF32(sw, h.nDst), wantS, nil, tolElem, 0)
}

// aggRef returns the forward aggregation and its scale (Σ|terms|).
func aggRef(h hostBlock, ew, sw, x []float32, dim int) (want, scale []float64) {
	want, scale = make([]float64, h.nDst*dim), make([]float64, h.nDst*dim)
	for i := range h.nDst {
		for c := range dim {
			var s, m float64
			if sw != nil {
				t := float64(sw[i]) * float64(x[i*dim+c])
				s, m = t, math.Abs(t)
			}
			for k := h.indptr[i]; k < h.indptr[i+1]; k++ {
				t := float64(ew[k]) * float64(x[int(h.indices[k])*dim+c])
				s += t
				m += math.Abs(t)
			}
			want[i*dim+c], scale[i*dim+c] = s, m
		}
	}
	return want, scale
}

// concatRef is AggregateConcat's float64 reference over h's source rows x
// [nSrc, dim] with edge weights ew: each live destination's own row, then
// its weighted sum, with the scales of their terms.
func concatRef(h hostBlock, ew, x []float32, dim int) (want, scale []float64) {
	sum, sumScale := aggRef(h, ew, nil, x, dim)
	want, scale = make([]float64, h.nDst*2*dim), make([]float64, h.nDst*2*dim)
	for i := range h.nDst {
		for c := range dim {
			want[i*2*dim+c] = float64(x[i*dim+c])
			scale[i*2*dim+c] = math.Abs(float64(x[i*dim+c]))
			want[i*2*dim+dim+c] = sum[i*dim+c]
			scale[i*2*dim+dim+c] = sumScale[i*dim+c]
		}
	}
	return want, scale
}

// aggCases calls f for Aggregate's and its backward's cases: every width,
// without and with self weights (sw and swb nil without), on a random block
// with random edge weights.
func (e *env) aggCases(op string, f func(name string, dim int, h hostBlock, ew, sw []float32, swb backend.Buffer)) {
	for _, dim := range []int{1, 16, 33, 100} {
		for _, self := range []bool{false, true} {
			name := fmt.Sprintf("%s dim=%d self=%v", op, dim, self)
			h := e.randomBlock(40, 90)
			ew := e.randF32(h.capEdges, 1)
			var sw []float32
			var swb backend.Buffer
			if self {
				sw = e.randF32(h.capDst, 1)
				swb = e.upload(sw)
			}
			f(name, dim, h, ew, sw, swb)
		}
	}
}

func testAggregate(e *env) {
	e.aggCases("Aggregate", func(name string, dim int, h hostBlock, ew, sw []float32, swb backend.Buffer) {
		x := e.randF32(h.capSrc*dim, 1)
		out := e.poison(h.capDst * dim)
		e.be.Aggregate(e.uploadBlock(h), e.upload(ew), swb, e.upload(x), dim, out)
		want, scale := aggRef(h, ew, sw, x, dim)
		e.checkClose(name, e.readF32(out, h.nDst*dim), want, scale, tolSum, dim)
	})
}

// testAggregateConcat checks the concatenation [x_i | Σ edgeW·x_j] and that
// rows past the live destinations are left as they were.
func testAggregateConcat(e *env) {
	for _, dim := range []int{1, 16, 33, 100} {
		name := fmt.Sprintf("AggregateConcat dim=%d", dim)
		h := e.randomBlock(40, 90)
		ew := e.randF32(h.capEdges, 1)
		x := e.randF32(h.capSrc*dim, 1)
		out := e.poison(h.capDst * 2 * dim)
		e.be.AggregateConcat(e.uploadBlock(h), e.upload(ew), e.upload(x), dim, out)
		want, wantScale := concatRef(h, ew, x, dim)
		got := e.readF32(out, h.capDst*2*dim)
		e.checkClose(name, got[:h.nDst*2*dim], want, wantScale, tolSum, 2*dim)
		for k, v := range got[h.nDst*2*dim:] {
			if !math.IsNaN(float64(v)) {
				e.t.Errorf("%s: element %d past the live rows was written (%g)", name, h.nDst*2*dim+k, v)
				break
			}
		}
	}
}

func testAggregateBackward(e *env) {
	e.aggCases("AggregateBackward", func(name string, dim int, h hostBlock, ew, sw []float32, swb backend.Buffer) {
		dout := e.randF32(h.capDst*dim, 1)
		dx0 := e.randF32(h.capSrc*dim, 1) // accumulated into
		dx := e.upload(dx0)
		e.be.AggregateBackward(e.uploadBlock(h), e.upload(ew), swb, e.upload(dout), dim, dx)
		want, scale := make([]float64, h.nSrc*dim), make([]float64, h.nSrc*dim)
		for i := range want {
			want[i], scale[i] = float64(dx0[i]), math.Abs(float64(dx0[i]))
		}
		add := func(j int, w float32, i int) {
			for c := range dim {
				t := float64(w) * float64(dout[i*dim+c])
				want[j*dim+c] += t
				scale[j*dim+c] += math.Abs(t)
			}
		}
		for i := range h.nDst {
			if sw != nil {
				add(i, sw[i], i)
			}
			for k := h.indptr[i]; k < h.indptr[i+1]; k++ {
				add(int(h.indices[k]), ew[k], i)
			}
		}
		e.checkClose(name, e.readF32(dx, h.nSrc*dim), want, scale, tolSum, dim)
	})
}

// randomDegrees draws full-graph degrees for h's sources, each destination's
// at least its sampled degree.
func (e *env) randomDegrees(h hostBlock) []float32 {
	deg := make([]float32, h.capSrc)
	for j := range deg {
		deg[j] = float32(e.rnd.IntN(50))
	}
	for i := range h.nDst {
		deg[i] = max(deg[i], float32(h.indptr[i+1]-h.indptr[i]))
	}
	return deg
}

// testMeanWeightsAggregate checks MeanWeights followed at once by a forward
// aggregation over the same block and weights (which a backend may fuse
// into one launch) against the two kept apart by another op: the same
// weights and the same output bits, the output close to the reference,
// and an aggregation over other weights left reading those.
func testMeanWeightsAggregate(e *env) {
	const tableRows = 200
	for _, op := range []string{"Aggregate", "AggregateConcat", "AggregateConcatTable"} {
		for _, dim := range []int{16, 33, 100} {
			name := fmt.Sprintf("MeanWeights then %s dim=%d", op, dim)
			h := e.randomBlock(40, 90)
			blk := e.uploadBlock(h)
			x := e.randF32(h.capSrc*dim, 1)
			in := e.upload(x)
			if op == "AggregateConcatTable" {
				ids := make([]int32, h.capSrc)
				for j := range ids {
					ids[j] = int32(j % tableRows)
				}
				blk.SrcIDs = e.upload(ids)
				x = e.randF32(tableRows*dim, 1)
				in = e.upload(x)
				rows := make([]float32, h.capSrc*dim)
				for j := range h.capSrc {
					copy(rows[j*dim:(j+1)*dim], x[int(ids[j])*dim:])
				}
				x = rows
			}
			outRows := h.capDst
			if op != "Aggregate" {
				outRows *= 2
			}
			run := func(ew, weights backend.Buffer, apart bool) backend.Buffer {
				out := e.poison(outRows * dim)
				e.be.MeanWeights(blk, ew)
				if apart {
					e.be.Fill(e.poison(4), 0)
				}
				switch op {
				case "Aggregate":
					e.be.Aggregate(blk, weights, nil, in, dim, out)
				case "AggregateConcat":
					e.be.AggregateConcat(blk, weights, in, dim, out)
				default:
					e.be.AggregateConcatTable(blk, weights, in, dim, out)
				}
				return out
			}
			ewA, ewB := e.poison(h.capEdges), e.poison(h.capEdges)
			outA, outB := run(ewA, ewA, false), run(ewB, ewB, true)
			other := e.randF32(h.capEdges, 1)
			ewC := e.poison(h.capEdges)
			outC := run(ewC, e.upload(other), false)
			if err := e.be.Sync(); err != nil {
				e.t.Fatalf("%s: %v", name, err)
			}
			wA, wB, wC := e.readF32(ewA, h.nEdges), e.readF32(ewB, h.nEdges), e.readF32(ewC, h.nEdges)
			checkEqual(e.t, name+" weights", f32bits(wA), f32bits(wB), 0)
			checkEqual(e.t, name+" weights beside other weights", f32bits(wC), f32bits(wB), 0)
			n := h.nDst * outRows / h.capDst * dim
			a, b := e.readF32(outA, n), e.readF32(outB, n)
			checkEqual(e.t, name+" output", f32bits(a), f32bits(b), dim)
			for k, got := range [][]float32{a, e.readF32(outC, n)} {
				ew := wB
				if k == 1 {
					ew = other
				}
				sum, scale := aggRef(h, ew, nil, x, dim)
				if op == "Aggregate" {
					e.checkClose(name, got, sum, scale, tolSum, dim)
					continue
				}
				half := make([]float32, 0, h.nDst*dim)
				halfScale := make([]float64, 0, h.nDst*dim)
				want := make([]float64, 0, h.nDst*dim)
				for i := range h.nDst {
					half = append(half, got[i*2*dim+dim:(i+1)*2*dim]...)
					want = append(want, sum[i*dim:(i+1)*dim]...)
					halfScale = append(halfScale, scale[i*dim:(i+1)*dim]...)
				}
				e.checkClose(fmt.Sprintf("%s (weights %d)", name, k), half, want, halfScale, tolSum, dim)
			}
		}
	}
}
