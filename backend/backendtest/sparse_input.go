package backendtest

import "fmt"

// sparseInputShapes are Linear shapes whose x is mostly zeros, as
// bag-of-words features are (a CPU skips the zeros: cpu/sparse_input.go):
// Cora's 1,433 columns, the narrowest width skipped (128), no live row,
// and narrow and odd outputs.
var sparseInputShapes = []linearShape{{120, 101, 1433, 32}, {50, 41, 128, 7}, {64, 0, 200, 16}, {40, 40, 256, 1}}

// sparseX is x [rows, in] with about share of its elements nonzero (and
// row 1 all zeros).
func (e *env) sparseX(rows, in int, share float64) []float32 {
	x := make([]float32, rows*in)
	for k := range x {
		if e.rnd.Float64() < share && (k/in != 1) {
			x[k] = float32(e.rnd.Float64()*2 - 1)
		}
	}
	return x
}

// testSparseInputProducts: Linear and LinearBackwardWeight over an x of 2%
// and 9% nonzeros (skipped zeros on a CPU) and 30% (a dense product) give
// the float64 sums, accumulating or not.
func testSparseInputProducts(e *env) {
	for _, s := range sparseInputShapes {
		for _, share := range []float64{0.02, 0.09, 0.3} {
			for _, acc := range []bool{false, true} {
				x, n := e.sparseX(s.cap, s.in, share), e.count(s.live, s.cap)
				w, dy := e.randF32(s.in*s.out, 1), e.randF32(s.cap*s.out, 1)
				name := fmt.Sprintf("Linear %+v, %g nonzero, accumulate=%v", s, share, acc)
				y, y0 := e.initial(s.cap*s.out, acc)
				e.be.Linear(e.upload(x), n, e.upload(w), s.in, s.out, y, acc)
				want, scale := matmulRef(false, false, s.live, s.out, s.in, 1, x, w, 1, y0)
				e.checkClose(name, e.readF32(y, s.live*s.out), want, scale, tolSum, s.out)

				name = fmt.Sprintf("LinearBackwardWeight %+v, %g nonzero, accumulate=%v", s, share, acc)
				dw, dw0 := e.initial(s.in*s.out, acc)
				e.be.LinearBackwardWeight(e.upload(x), e.upload(dy), n, s.in, s.out, dw, acc)
				want, scale = matmulRef(true, false, s.in, s.out, s.live, 1, x[:s.live*s.in], dy[:s.live*s.out], 1, dw0)
				e.checkClose(name, e.readF32(dw, s.in*s.out), want, scale, tolSum, s.out)
			}
		}
	}
}
