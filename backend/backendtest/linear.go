package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// linearShape is one test case: cap rows provisioned, live rows, in, out.
type linearShape struct{ cap, live, in, out int }

// linearShapes include sizes 1, 7, 17, 33 and values that are not
// multiples of common block sizes, live counts below capacity and 0. The
// narrow outputs (1 to 8 columns, which a GPU may take on kernels of its
// own) come with in a multiple of 4 (100, 260: float4 words, and more
// than 32 words a row) and not (37), live rows over several chunks of 256,
// and live counts of 0.
var linearShapes = []linearShape{
	{1, 1, 1, 1}, {9, 7, 17, 33}, {40, 33, 7, 17}, {70, 64, 100, 256},
	{130, 127, 33, 47}, {20, 0, 5, 6}, {50, 50, 64, 1}, {19, 17, 1, 70},
	{600, 531, 100, 4}, {300, 259, 37, 8}, {64, 0, 100, 1}, {45, 40, 37, 1},
	{70, 0, 37, 4}, {100, 99, 100, 8}, {50, 47, 37, 3}, {90, 81, 260, 2},
}

// matmulRef returns c = alpha·op(a)·op(b) + beta·c0 (c0 may be nil) for
// row-major m×n with op(a) m×k and op(b) k×n, and the scale Σ|terms|.
func matmulRef(transA, transB bool, m, n, k int, alpha float64, a, b []float32, beta float64, c0 []float32) (want, scale []float64) {
	want, scale = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, mag float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*m+i]
				} else {
					av = a[i*k+p]
				}
				if transB {
					bv = b[j*k+p]
				} else {
					bv = b[p*n+j]
				}
				t := float64(av) * float64(bv)
				s += t
				mag += math.Abs(t)
			}
			s, mag = alpha*s, math.Abs(alpha)*mag
			if c0 != nil && beta != 0 {
				s += beta * float64(c0[i*n+j])
				mag += math.Abs(beta * float64(c0[i*n+j]))
			}
			want[i*n+j], scale[i*n+j] = s, mag
		}
	}
	return want, scale
}

// initial returns the starting output for an accumulate test: random rows
// when accumulating, NaN-poisoned otherwise (nil host copy).
func (e *env) initial(n int, accumulate bool) (backend.Buffer, []float32) {
	if !accumulate {
		return e.poison(n), nil
	}
	h := e.randF32(n, 1)
	return e.upload(h), h
}

func testLinear(e *env) {
	for _, s := range linearShapes {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("Linear %+v accumulate=%v", s, acc)
			x := e.randF32(s.cap*s.in, 1)
			w := e.randF32(s.in*s.out, 1)
			y, y0 := e.initial(s.cap*s.out, acc)
			e.be.Linear(e.upload(x), e.count(s.live, s.cap), e.upload(w), s.in, s.out, y, acc)
			got := e.readF32(y, s.live*s.out)
			want, scale := matmulRef(false, false, s.live, s.out, s.in, 1, x, w, 1, y0)
			e.checkClose(name, got, want, scale, tolSum, s.out)
		}
	}
}

func testLinearBackwardData(e *env) {
	for _, s := range linearShapes {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("LinearBackwardData %+v accumulate=%v", s, acc)
			dy := e.randF32(s.cap*s.out, 1)
			w := e.randF32(s.in*s.out, 1)
			dx, dx0 := e.initial(s.cap*s.in, acc)
			e.be.LinearBackwardData(e.upload(dy), e.count(s.live, s.cap), e.upload(w), s.in, s.out, dx, acc)
			got := e.readF32(dx, s.live*s.in)
			// dx = dy·wᵀ: op(b) = wᵀ with w stored [in, out] = [n, k].
			want, scale := matmulRef(false, true, s.live, s.in, s.out, 1, dy, w, 1, dx0)
			e.checkClose(name, got, want, scale, tolSum, s.in)
		}
	}
}

func testLinearBackwardWeight(e *env) {
	for _, s := range linearShapes {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("LinearBackwardWeight %+v accumulate=%v", s, acc)
			x := e.randF32(s.cap*s.in, 1)
			dy := e.randF32(s.cap*s.out, 1)
			dw, dw0 := e.initial(s.in*s.out, acc)
			e.be.LinearBackwardWeight(e.upload(x), e.upload(dy), e.count(s.live, s.cap), s.in, s.out, dw, acc)
			got := e.readF32(dw, s.in*s.out)
			// dw = xᵀ·dy over the live rows: op(a) = xᵀ with x stored [k, m].
			want, scale := matmulRef(true, false, s.in, s.out, s.live, 1, x[:s.live*s.in], dy[:s.live*s.out], 1, dw0)
			e.checkClose(name, got, want, scale, tolSum, s.out)
		}
	}
}

// testLinearKeepsPaddingRows: Linear and LinearBackwardData, when they
// accumulate, leave the output's rows past the live count bit-for-bit as
// they were (a driver accumulates into views whose later rows are live
// data). Without accumulate those rows are unspecified.
func testLinearKeepsPaddingRows(e *env) {
	for _, s := range linearShapes {
		if s.live == s.cap {
			continue
		}
		x := e.upload(e.randF32(s.cap*s.in, 1))
		dy := e.upload(e.randF32(s.cap*s.out, 1))
		w := e.upload(e.randF32(s.in*s.out, 1))

		y0 := padPattern(e, s.cap*s.out)
		y := e.upload(y0)
		e.be.Linear(x, e.count(s.live, s.cap), w, s.in, s.out, y, true)
		checkBits(e, fmt.Sprintf("Linear %+v rows from %d", s, s.live),
			e.readF32(y, s.cap*s.out)[s.live*s.out:], y0[s.live*s.out:], s.out)

		dx0 := padPattern(e, s.cap*s.in)
		dx := e.upload(dx0)
		e.be.LinearBackwardData(dy, e.count(s.live, s.cap), w, s.in, s.out, dx, true)
		checkBits(e, fmt.Sprintf("LinearBackwardData %+v rows from %d", s, s.live),
			e.readF32(dx, s.cap*s.in)[s.live*s.in:], dx0[s.live*s.in:], s.in)
	}
}

// padPattern is n random values with a NaN (payload 0x7fc0beef) every
// seventh element, so that any rewrite of a row is seen.
func padPattern(e *env, n int) []float32 {
	s := e.randF32(n, 3)
	for i := 0; i < n; i += 7 {
		s[i] = math.Float32frombits(0x7fc0beef)
	}
	return s
}

// checkBits requires got and want to be bit-identical.
func checkBits(e *env, what string, got, want []float32, cols int) {
	e.t.Helper()
	g, w := make([]uint32, len(got)), make([]uint32, len(want))
	for i := range got {
		g[i] = math.Float32bits(got[i])
	}
	for i := range want {
		w[i] = math.Float32bits(want[i])
	}
	checkEqual(e.t, what, g, w, cols)
}
