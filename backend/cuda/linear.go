package cuda

import (
	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
)

// Linear ops run cuBLAS SGEMM (row-major through the transposition trick).
// Eagerly they read the live row count back (a host sync) and multiply only
// live rows. While capturing a graph, or with Options.CapacityGemm, they
// multiply the whole capacity, so that no host sync is needed, and behave as
// if only live rows were multiplied: rows [live, Cap) of an output are moved
// to scratch before the GEMM and put back after it (Linear and
// LinearBackwardData), so they are left exactly as they were even when the
// output is a view whose padding rows belong to someone else; and
// LinearBackwardWeight, which sums over rows, moves the padding rows of x
// and dy to scratch and zeroes them for the GEMM, then puts them back. Each
// costs two small launches and traffic proportional to the padding.

// Linear: y[:n] = x[:n]·w (+ y[:n] when accumulate); x [n.Cap, in],
// w [in, out], y [n.Cap, out].
func (b *Backend) Linear(x backend.Buffer, n backend.Count, w backend.Buffer, in, out int, y backend.Buffer, accumulate bool) {
	c := b.begin("Linear")
	defer c.end()
	c.dim("in", in)
	c.dim("out", out)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, n.Cap*in)
	ws := c.buf("w", w, backend.F32, in*out)
	ys := c.buf("y", y, backend.F32, n.Cap*out)
	if !c.ok {
		return
	}
	c.keepPadding(ys.addr(), out, nP, n.Cap, func(rows int) {
		c.sgemm(false, false, rows, out, in, 1, xs.addr(), ws.addr(), beta(accumulate), ys.addr())
	})
}

// LinearBackwardData: dx[:n] = dy[:n]·wᵀ (+ dx[:n] when accumulate).
func (b *Backend) LinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, in, out int, dx backend.Buffer, accumulate bool) {
	c := b.begin("LinearBackwardData")
	defer c.end()
	c.dim("in", in)
	c.dim("out", out)
	nP := c.count("n", n)
	dys := c.buf("dy", dy, backend.F32, n.Cap*out)
	ws := c.buf("w", w, backend.F32, in*out)
	dxs := c.buf("dx", dx, backend.F32, n.Cap*in)
	if !c.ok {
		return
	}
	c.keepPadding(dxs.addr(), in, nP, n.Cap, func(rows int) {
		c.sgemm(false, true, rows, in, out, 1, dys.addr(), ws.addr(), beta(accumulate), dxs.addr())
	})
}

// keepPadding runs gemm(rows) so that rows [live, capRows) of the output
// y [capRows, cols] keep their contents: eagerly gemm gets the live count;
// on the capacity path it gets capRows and the padding rows are stashed
// before and restored after.
func (c *call) keepPadding(y uintptr, cols int, nP uintptr, capRows int, gemm func(rows int)) {
	if c.exactRows() {
		gemm(c.gemmRows(nP, capRows))
		return
	}
	stash := c.scratch(scratchPad, int64(capRows)*int64(cols)*4)
	work := int64(capRows) * int64(cols)
	c.args().ptr(y).i32(cols).ptr(0).i32(0).ptr(nP).i32(capRows).ptr(stash).flag(false)
	c.launch("pad_stash", d1(c.blocks(work, 256)), d1(256), 0)
	gemm(capRows)
	c.args().ptr(y).i32(cols).ptr(0).i32(0).ptr(nP).i32(capRows).ptr(stash).flag(true)
	c.launch("pad_stash", d1(c.blocks(work, 256)), d1(256), 0)
}

// LinearBackwardWeight: dw = x[:n]ᵀ·dy[:n] (+ dw when accumulate).
func (b *Backend) LinearBackwardWeight(x, dy backend.Buffer, n backend.Count, in, out int, dw backend.Buffer, accumulate bool) {
	c := b.begin("LinearBackwardWeight")
	defer c.end()
	c.dim("in", in)
	c.dim("out", out)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, n.Cap*in)
	dys := c.buf("dy", dy, backend.F32, n.Cap*out)
	dws := c.buf("dw", dw, backend.F32, in*out)
	if !c.ok {
		return
	}
	if c.exactRows() {
		rows := c.gemmRows(nP, n.Cap)
		c.sgemm(true, false, in, out, rows, 1, xs.addr(), dys.addr(), beta(accumulate), dws.addr())
		return
	}
	xa, xb := xs.ptr, xs.ptr+uintptr(n.Cap*in*4)
	da, db := dys.ptr, dys.ptr+uintptr(n.Cap*out*4)
	overlap := xa < db && da < xb
	stash := c.scratch(scratchPad, int64(n.Cap)*int64(in+out)*4)
	c.padStash(xs.ptr, in, dys.ptr, out, nP, n.Cap, stash, false, overlap)
	c.sgemm(true, false, in, out, n.Cap, 1, xs.addr(), dys.addr(), beta(accumulate), dws.addr())
	c.padStash(xs.ptr, in, dys.ptr, out, nP, n.Cap, stash, true, overlap)
}

// padStash launches pad_stash over x and dy, one at a time when they
// overlap (restoring in the reverse order of stashing).
func (c *call) padStash(x uintptr, in int, dy uintptr, out int, nP uintptr, rows int, stash uintptr, restore, overlap bool) {
	work := int64(rows) * int64(in+out)
	if !overlap {
		c.args().ptr(x).i32(in).ptr(dy).i32(out).ptr(nP).i32(rows).ptr(stash).flag(restore)
		c.launch("pad_stash", d1(c.blocks(work, 256)), d1(256), 0)
		return
	}
	type mat struct {
		p    uintptr
		cols int
		s    uintptr
	}
	ms := []mat{{x, in, stash}, {dy, out, stash + uintptr(rows*in*4)}}
	if restore {
		ms[0], ms[1] = ms[1], ms[0]
	}
	for _, m := range ms {
		c.args().ptr(m.p).i32(m.cols).ptr(0).i32(0).ptr(nP).i32(rows).ptr(m.s).flag(restore)
		c.launch("pad_stash", d1(c.blocks(work, 256)), d1(256), 0)
	}
}

// Gemm: c = alpha·op(a)·op(b) + beta·c with op(a) [m, k], op(b) [k, n],
// row-major; a is [k, m] when transA, b is [n, k] when transB. Static sizes.
func (b *Backend) Gemm(transA, transB bool, m, n, k int, alpha float32, a, bm backend.Buffer, beta float32, cm backend.Buffer) {
	c := b.begin("Gemm")
	defer c.end()
	if m < 0 || n < 0 || k < 0 {
		c.failf("negative size m=%d n=%d k=%d", m, n, k)
		return
	}
	as := c.buf("a", a, backend.F32, m*k)
	bs := c.buf("b", bm, backend.F32, k*n)
	cs := c.buf("c", cm, backend.F32, m*n)
	if !c.ok {
		return
	}
	c.sgemm(transA, transB, m, n, k, alpha, as.addr(), bs.addr(), beta, cs.addr())
}

func beta(accumulate bool) float32 {
	if accumulate {
		return 1
	}
	return 0
}

// exactRows reports whether the Linear ops read the live count back
// (eager use without CapacityGemm) rather than multiply the capacity.
func (c *call) exactRows() bool { return !c.b.opt.CapacityGemm && !c.b.capturing }

// gemmRows reads the live count back to the host (a host sync), clamped to
// [0, capRows].
func (c *call) gemmRows(nP uintptr, capRows int) int {
	if !c.ok {
		return capRows
	}
	b := c.b
	r, _, _ := purego.SyscallN(b.drv.cuMemcpyDtoHAsync, b.host+hostCountOff, nP, 4, b.stream)
	b.stats.CopiesDtoH++
	b.stats.BytesDtoH += 4
	if code := int32(r); code != cudaSuccess {
		c.fail(b.drv.err("cuMemcpyDtoHAsync_v2", int(code)))
		return 0
	}
	c.streamSync()
	v := int(b.hostInt32(hostCountOff, 0))
	return min(max(v, 0), capRows)
}

// sgemm issues one row-major SGEMM; empty products only scale c.
func (c *call) sgemm(transA, transB bool, m, n, k int, alpha float32, a, bm uintptr, beta float32, cm uintptr) {
	if !c.ok || m == 0 || n == 0 {
		return
	}
	b := c.b
	if k == 0 && beta == 1 {
		return
	}
	if k == 0 && beta == 0 {
		c.memset(cm, 0, int64(m)*int64(n)*4)
		return
	}
	b.gemmSc.alpha, b.gemmSc.beta = alpha, beta
	b.stats.Gemms++
	if err := b.blas.sgemmRowMajor(b.gemmSc, transA, transB, m, n, k, a, bm, cm); err != nil {
		c.fail(err)
	}
}
