package cpu

import "github.com/fanout-gnn/fanout/backend"

// Linear: y[:n] = x[:n]·w (+ y[:n] when accumulate); x [n.Cap, in],
// w [in, out], y [n.Cap, out]. x and w may both be BF16 (bfloat16
// operands, widened: the product and its sums are float32), and then y
// may be BF16 too (the float32 results rounded). An x of mostly zeros
// skips them (sparse_input.go).
func (b *Backend) Linear(x backend.Buffer, n backend.Count, w backend.Buffer, in, out int, y backend.Buffer, accumulate bool) {
	c, ck := b.checkLinear(x, n, w, in, out, y, accumulate)
	defer c.end()
	if !c.ok {
		return
	}
	rows, yb := ck.n, ck.y
	xs, ws := operands(ck.x, ck.w, n.Cap*in, in*out)
	if yb.dt == backend.F32 {
		if nz, ok := b.sparseRows(xs, rows, in); ok {
			b.listSums(nz, rows, ws, out, yb.f32, accumulate) // x mostly zeros (sparse_input.go)
			return
		}
		b.sgemm(&c, false, false, rows, out, in, xs, in, ws, out, beta(accumulate), yb.f32, out)
		return
	}
	ys := widen(yb.u16[:rows*out]) // the float32 sums, then rounded
	b.sgemm(&c, false, false, rows, out, in, xs, in, ws, out, beta(accumulate), ys, out)
	roundRow(yb.u16, ys)
}

// LinearBackwardData: dx[:n] = dy[:n]·wᵀ (+ dx[:n] when accumulate);
// dy [n.Cap, out], w [in, out], dx [n.Cap, in].
func (b *Backend) LinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, in, out int, dx backend.Buffer, accumulate bool) {
	c, ck := b.checkLinearBackwardData(dy, n, w, in, out, dx, accumulate)
	defer c.end()
	if !c.ok {
		return
	}
	b.sgemm(&c, false, true, ck.n, in, out, ck.dy, out, ck.w, out, beta(accumulate), ck.dx, in)
}

// LinearBackwardWeight: dw = x[:n]ᵀ·dy[:n] (+ dw when accumulate);
// x [n.Cap, in], dy [n.Cap, out], dw [in, out]. x and dy may both be BF16,
// as in Linear.
func (b *Backend) LinearBackwardWeight(x, dy backend.Buffer, n backend.Count, in, out int, dw backend.Buffer, accumulate bool) {
	c, ck := b.checkLinearBackwardWeight(x, dy, n, in, out, dw, accumulate)
	defer c.end()
	if !c.ok {
		return
	}
	xs, dys := operands(ck.x, ck.dy, n.Cap*in, n.Cap*out)
	if nz, ok := b.sparseRows(xs, ck.n, in); ok {
		b.sparseWeightGrad(nz, in, dys, out, ck.dw, accumulate) // x mostly zeros (sparse_input.go)
		return
	}
	b.sgemm(&c, true, false, in, out, ck.n, xs, in, dys, out, beta(accumulate), ck.dw, out)
}

func beta(accumulate bool) float32 {
	if accumulate {
		return 1
	}
	return 0
}

// sgemm runs C = op(A)·op(B) + beta·C with alpha 1 and records any error.
func (b *Backend) sgemm(c *call, transA, transB bool, m, n, k int, a []float32, lda int, bm []float32, ldb int, beta float32, cm []float32, ldc int) {
	if err := b.gemm.Sgemm(transA, transB, m, n, k, 1, a, lda, bm, ldb, beta, cm, ldc); err != nil {
		c.failf("%v", err)
	}
}
