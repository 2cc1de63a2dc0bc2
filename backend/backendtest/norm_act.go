package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// testNormBackwardAct: NormBackward with the activation after the
// normalisation (ReLU, dropout, both) gives bit for bit what
// BiasActDropoutBackward followed by NormBackward without it gives, into
// another buffer and in place over dy, for batch and layer normalisation
// on the rows NormApply wrote.
func testNormBackwardAct(e *env) {
	for _, perRow := range []bool{false, true} {
		for _, a := range []struct {
			relu bool
			p    float32
		}{{true, 0}, {true, 0.4}, {false, 0.3}} {
			c := e.normCase(300, 211, 37)
			n := e.count(c.live, c.rows)
			xb, gamma, beta := e.upload(c.x), e.upload(c.gamma), e.upload(c.beta)
			stats := e.poison(2 * c.dim)
			if !perRow {
				e.norm().BatchNormStats(xb, n, c.dim, nil, nil, stats)
			}
			size := c.rows * c.dim
			y, mask := e.poison(size), backend.Buffer(nil)
			if a.p > 0 {
				mask = e.alloc(backend.U8, size, 0)
			}
			e.norm().NormApply(xb, n, c.dim, perRow, stats, gamma, beta, normEps, a.relu, a.p, e.rand(5, 2, 1, 3), mask, y)
			act := backend.ActGrad{Relu: a.relu, P: a.p, Mask: mask}
			if a.p == 0 {
				act.Y = y
			}
			dy := e.randF32(size, 1)
			name := fmt.Sprintf("NormBackward perRow %v relu %v p %g", perRow, a.relu, a.p)
			// The two passes one after the other.
			dh, g0, b0, s0 := e.poison(size), e.poison(c.dim), e.poison(c.dim), e.poison(c.dim)
			e.be.BiasActDropoutBackward(e.upload(dy), y, n, c.dim, a.relu, a.p, mask, dh, nil)
			e.norm().NormBackward(xb, dh, n, c.dim, perRow, stats, gamma, normEps, backend.ActGrad{}, dh, g0, b0, s0)
			want := [][]float32{e.readF32(dh, c.live*c.dim), e.readF32(g0, c.dim), e.readF32(b0, c.dim), e.readF32(s0, c.dim)}
			for _, inPlace := range []bool{false, true} {
				dyb := e.upload(dy)
				dx := dyb
				if !inPlace {
					dx = e.poison(size)
				}
				g1, b1, s1 := e.poison(c.dim), e.poison(c.dim), e.poison(c.dim)
				e.norm().NormBackward(xb, dyb, n, c.dim, perRow, stats, gamma, normEps, act, dx, g1, b1, s1)
				got := [][]float32{e.readF32(dx, c.live*c.dim), e.readF32(g1, c.dim), e.readF32(b1, c.dim), e.readF32(s1, c.dim)}
				for k, what := range []string{"dx", "dgamma", "dbeta", "dbias"} {
					checkEqual(e.t, fmt.Sprintf("%s in place %v %s", name, inPlace, what), got[k], want[k], c.dim)
				}
			}
		}
	}
}

// testBatchNormStatsBias: BatchNormStats with a bias gives bit for bit the
// rows and statistics of BiasActDropout followed by BatchNormStats, into
// another buffer and in place, over one chunk of rows and several.
func testBatchNormStatsBias(e *env) {
	for _, sz := range [][3]int{{300, 211, 37}, {5000, 4999, 64}} {
		c := e.normCase(sz[0], sz[1], sz[2])
		n := e.count(c.live, c.rows)
		bias := e.upload(e.randF32(c.dim, 2))
		live := c.live * c.dim
		pre, stats := e.poison(c.rows*c.dim), e.poison(2*c.dim)
		e.be.BiasActDropout(e.upload(c.x), n, c.dim, bias, false, 0, backend.Rand{}, nil, pre)
		e.norm().BatchNormStats(pre, n, c.dim, nil, nil, stats)
		wantPre, wantStats := e.readF32(pre, live), e.readF32(stats, 2*c.dim)
		for _, inPlace := range []bool{false, true} {
			xb := e.upload(c.x)
			out := xb
			if !inPlace {
				out = e.poison(c.rows * c.dim)
			}
			got := e.poison(2 * c.dim)
			e.norm().BatchNormStats(xb, n, c.dim, bias, out, got)
			name := fmt.Sprintf("BatchNormStats with bias %dx%d in place %v", c.live, c.dim, inPlace)
			checkEqual(e.t, name+" rows", e.readF32(out, live), wantPre, c.dim)
			checkEqual(e.t, name+" stats", e.readF32(got, 2*c.dim), wantStats, c.dim)
		}
	}
}
