package backendtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
)

// The attention ops that do in one call what two calls of another do, against
// those two on the same backend, bit for bit.

// testHeadDots: the pair in one call gives bitwise what two HeadDots give
// on the same backend, with the second count below the first (a GAT
// layer's destinations among its sources), above it, or zero; rows past
// each count are left alone, and x's rows past both are not read.
func testHeadDots(e *env) {
	for _, c := range [][4]int{{1, 1, 211, 150}, {3, 5, 211, 64}, {4, 16, 131, 211}, {2, 33, 211, 0}, {4, 64, 200, 37},
		{4, 47, 180, 24}, {2, 130, 90, 90}, {33, 2, 50, 70}, {8, 19, 100, 50}} {
		heads, dim, live1, live2 := c[0], c[1], c[2], c[3]
		const cp1, cp2 = 300, 260
		w := heads * dim
		x, a1, a2 := e.randF32(cp1*w, 1), e.randF32(w, 1), e.randF32(w, 1)
		for i := max(live1, live2) * w; i < cp1*w; i++ {
			x[i] = float32(math.NaN())
		}
		xb, a1b, a2b := e.upload(x), e.upload(a1), e.upload(a2)
		n1, n2 := e.count(live1, cp1), e.count(live2, cp2)
		o1, o2, r1, r2 := e.poison(cp1*heads), e.poison(cp2*heads), e.poison(cp1*heads), e.poison(cp2*heads)
		e.att().HeadDots(xb, n1, n2, heads, dim, a1b, a2b, o1, o2)
		e.att().HeadDot(xb, n1, heads, dim, a1b, r1)
		e.att().HeadDot(xb, n2, heads, dim, a2b, r2)
		name := fmt.Sprintf("HeadDots heads=%d dim=%d live=%d,%d", heads, dim, live1, live2)
		for _, o := range []struct {
			what      string
			got, want backend.Buffer
			live, cp  int
		}{{"out1", o1, r1, live1, cp1}, {"out2", o2, r2, live2, cp2}} {
			got := e.readF32(o.got, o.cp*heads)
			checkEqual(e.t, name+" "+o.what, got[:o.live*heads], e.readF32(o.want, o.live*heads), heads)
			if i := slices.IndexFunc(got[o.live*heads:], func(v float32) bool { return !math.IsNaN(float64(v)) }); i >= 0 {
				e.t.Errorf("%s %s: element %d past the count written", name, o.what, o.live*heads+i)
			}
		}
	}
}
