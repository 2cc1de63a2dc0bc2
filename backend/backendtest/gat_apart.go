package backendtest

import (
	"fmt"
	"math"
)

// testGradientsApart: HeadDotBackward without add writes onto zeros what
// it adds to a zeroed dx, leaving the rows past its counts; and
// HeadAggregateBackward's two gradients asked apart (dcoef alone, then dx
// alone) are those it gives together: dcoef bit for bit, dx to the order of
// its float sums.
func testGradientsApart(e *env) {
	for _, c := range [][4]int{{4, 64, 211, 150}, {3, 5, 211, 64}, {2, 33, 131, 211}, {4, 47, 211, 150}, {8, 19, 131, 211}} {
		heads, dim, live1, live2 := c[0], c[1], c[2], c[3]
		const cp = 300
		w := heads * dim
		xb, d1, d2 := e.upload(e.randF32(cp*w, 1)), e.upload(e.randF32(cp*heads, 1)), e.upload(e.randF32(cp*heads, 1))
		a1, a2 := e.upload(e.randF32(w, 1)), e.upload(e.randF32(w, 1))
		n1, n2 := e.count(live1, cp), e.count(live2, cp)
		old := e.randF32(cp*w, 1)
		set, zeroed := e.upload(old), e.upload(make([]float32, cp*w))
		e.att().HeadDotBackward(xb, d1, d2, n1, n2, heads, dim, a1, a2, set, false, e.poison(w), e.poison(w))
		e.att().HeadDotBackward(xb, d1, d2, n1, n2, heads, dim, a1, a2, zeroed, true, e.poison(w), e.poison(w))
		rows := max(live1, live2) * w
		name := fmt.Sprintf("HeadDotBackward without add heads=%d dim=%d", heads, dim)
		got := e.readF32(set, cp*w)
		checkEqual(e.t, name, got[:rows], e.readF32(zeroed, rows), w)
		checkEqual(e.t, name+" past the rows", got[rows:], old[rows:], w)
	}
	for _, c := range headAggCases {
		name := fmt.Sprintf("HeadAggregateBackward apart %+v", c)
		h, blk, coef, x := e.headAggInputs(c)
		w, ow := c.widths()
		coefB, xB, doutB := e.upload(coef), e.upload(x), e.upload(e.randF32(h.capDst*ow, 1))
		dx0 := e.randF32(h.capSrc*w, 1)
		n := (h.capDst + h.capEdges) * c.heads
		dcTogether, dxTogether := e.upload(make([]float32, n)), e.upload(dx0)
		e.att().HeadAggregateBackward(blk, coefB, xB, doutB, c.heads, c.dim, c.mean, dcTogether, dxTogether)
		dcApart, dxApart := e.upload(make([]float32, n)), e.upload(dx0)
		e.att().HeadAggregateBackward(blk, coefB, xB, doutB, c.heads, c.dim, c.mean, dcApart, nil)
		e.att().HeadAggregateBackward(blk, coefB, xB, doutB, c.heads, c.dim, c.mean, nil, dxApart)
		checkEqual(e.t, name+" dcoef", e.readF32(dcApart, n), e.readF32(dcTogether, n), c.heads)
		want, scale := make([]float64, h.nSrc*w), make([]float64, h.nSrc*w)
		for k, v := range e.readF32(dxTogether, h.nSrc*w) {
			want[k], scale[k] = float64(v), math.Abs(float64(v))+math.Abs(float64(dx0[k]))
		}
		e.checkClose(name+" dx", e.readF32(dxApart, h.nSrc*w), want, scale, tolSum, w)
	}
}
