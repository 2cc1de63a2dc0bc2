package backendtest

import (
	"fmt"
	"math"
)

// testGINWeights: each edge of destination i weighs min(full degree,
// fanout) over the sampled degree (full degree over it with fanout < 0),
// every destination's self weight is 1 + ε, ε read from backend memory.
// Fanout 3 caps some degrees and leaves others; with fanout 0 every edge
// weighs 0.
func testGINWeights(e *env) {
	h := e.randomBlock(30, 70)
	deg := e.randomDegrees(h)
	blk, degB, eps := e.uploadBlock(h), e.upload(deg), e.upload([]float32{-0.25})
	for _, fanout := range []int{-1, 0, 3, 1 << 40} {
		ew := e.poison(h.capEdges)
		sw := e.poison(h.capDst)
		e.be.GINWeights(blk, degB, fanout, eps, ew, sw)
		wantE := make([]float64, h.nEdges)
		wantS := make([]float64, h.nDst)
		for i := range h.nDst {
			wantS[i] = 0.75
			d := float64(deg[i])
			if fanout >= 0 {
				d = min(d, float64(fanout))
			}
			lo, hi := h.indptr[i], h.indptr[i+1]
			for k := lo; k < hi; k++ {
				wantE[k] = d / float64(hi-lo)
			}
		}
		name := fmt.Sprintf("GINWeights (fanout %d)", fanout)
		e.checkClose(name+" edgeW", e.readF32(ew, h.nEdges), wantE, nil, tolElem, 0)
		e.checkClose(name+" selfW", e.readF32(sw, h.nDst), wantS, nil, tolElem, 0)
	}
}

// testDotSum: the sum of a row-wise product over the live rows only, the
// same bits on a second call.
func testDotSum(e *env) {
	const rows, live, dim = 50, 37, 13
	a, b := e.randF32(rows*dim, 1), e.randF32(rows*dim, 1)
	for i := live * dim; i < rows*dim; i++ {
		a[i] = float32(math.NaN()) // past the count: must not be read
	}
	out := e.poison(1)
	ab, bb := e.upload(a), e.upload(b)
	e.be.DotSum(ab, bb, e.count(live, rows), dim, out)
	var want, scale float64
	for i := range live * dim {
		want += float64(a[i]) * float64(b[i])
		scale += math.Abs(float64(a[i]) * float64(b[i]))
	}
	got := e.readF32(out, 1)
	e.checkClose("DotSum", got, []float64{want}, []float64{scale}, tolElem, 0)
	e.be.DotSum(ab, bb, e.count(live, rows), dim, out)
	if again := e.readF32(out, 1); again[0] != got[0] {
		e.t.Fatalf("DotSum: %v, then %v", got[0], again[0])
	}
}
