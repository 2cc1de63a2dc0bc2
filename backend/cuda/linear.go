package cuda

import (
	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
)

// Linear ops run cuBLAS SGEMM (row-major through the transposition trick),
// except the narrow float32 products of skinny.go (Linear and
// LinearBackwardWeight with at most 8 output columns), which read the live
// count on the device and need none of what follows. Eagerly the cuBLAS
// products read the live row count back (a host sync) and multiply only
// live rows. While capturing a graph, or with Options.CapacityGemm, they
// multiply the whole capacity, so that no host sync is needed, and behave as
// if only live rows were multiplied (pad.go): the padding rows of an
// accumulated output are stashed and put back, so they are left exactly as
// they were even when the output is a view whose padding rows belong to
// someone else (an overwritten output's are unspecified); and
// LinearBackwardWeight, which sums over rows, sees its inputs' padding rows
// as zeros (stashed, zeroed, put back; or only zeroed, for whole buffers
// declared by ScratchPadding). Consecutive Linear ops over the same
// matrices share one stash; it is put back before any other op.

// Linear: y[:n] = x[:n]·w (+ y[:n] when accumulate); x [n.Cap, in],
// w [in, out], y [n.Cap, out]. x and w may both be BF16 (cublasGemmEx with
// float32 products and sums; even in and out), and then y may be BF16
// (rounded by cuBLAS).
func (b *Backend) Linear(x backend.Buffer, n backend.Count, w backend.Buffer, in, out int, y backend.Buffer, accumulate bool) {
	c, ck := b.checkLinear(x, n, w, in, out, y, accumulate)
	defer c.end()
	if !c.ok {
		return
	}
	if c.skinnyLinear(&ck) {
		return
	}
	nP, xs, ws, ys := ck.nP, ck.x, ck.w, ck.y
	half, halfY := xs.dt == backend.BF16, ys.dt == backend.BF16
	if !half && c.tcRows(false, xs.addr(), ws.addr(), ys.addr(), nP, n.Cap, out, in, accumulate) {
		return
	}
	wm := matrix{ptr: ws.ptr, cols: words(half, out), rows: in, role: roleWhole}
	c.rowsGemm(gemmType{half, halfY}, false, xs, ws.addr(), wm, ys, nP, n, in, out, accumulate)
}

// LinearBackwardData: dx[:n] = dy[:n]·wᵀ (+ dx[:n] when accumulate).
func (b *Backend) LinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, in, out int, dx backend.Buffer, accumulate bool) {
	c, ck := b.checkLinearBackwardData(dy, n, w, in, out, dx, accumulate)
	defer c.end()
	nP, dys, ws, dxs := ck.nP, ck.dy, ck.w, ck.dx
	if !c.ok || c.tcRows(true, dys.addr(), ws.addr(), dxs.addr(), nP, n.Cap, in, out, accumulate) {
		return
	}
	wm := matrix{ptr: ws.ptr, cols: out, rows: in, role: roleWhole}
	c.rowsGemm(gemmType{}, true, dys, ws.addr(), wm, dxs, nP, n, out, in, accumulate)
}

// rowsGemm issues y[:n] (+)= a[:n]·op(b), a [n.Cap, k], op(b) [k, cols]
// (b [cols, k] when transB), y [n.Cap, cols], of the types t: eagerly over
// the live rows (read back: a host sync), else over the capacity with
// pad.go's rules (a's padding rows read as they are, y's kept when
// accumulating, else free, and w, the weight b is or is made from, whole).
func (c *call) rowsGemm(t gemmType, transB bool, a *buffer, b uintptr, w matrix, y *buffer, nP uintptr, n backend.Count, k, cols int, accumulate bool) {
	gemm := func(rows int) {
		c.gemm(t, false, transB, rows, cols, k, 1, a.addr(), b, beta(accumulate), y.addr())
	}
	if c.exactRows() {
		gemm(c.gemmRows(nP, n.Cap))
		return
	}
	c.capacityGemm([]matrix{
		{ptr: a.ptr, cols: words(t.ab, k), rows: n.Cap, nP: nP, role: roleRows},
		w,
		{ptr: y.ptr, cols: words(t.c, cols), rows: n.Cap, nP: nP, role: outputRole(accumulate)},
	}, func([]uintptr) { gemm(n.Cap) })
}

// LinearBackwardWeight: dw = x[:n]ᵀ·dy[:n] (+ dw when accumulate). x and
// dy may both be BF16, as in Linear.
func (b *Backend) LinearBackwardWeight(x, dy backend.Buffer, n backend.Count, in, out int, dw backend.Buffer, accumulate bool) {
	c, ck := b.checkLinearBackwardWeight(x, dy, n, in, out, dw, accumulate)
	defer c.end()
	if !c.ok {
		return
	}
	if c.skinnyWgrad(&ck) {
		return
	}
	nP, xs, dys, dws := ck.nP, ck.x, ck.dy, ck.dw
	half := xs.dt == backend.BF16
	if !half && c.tcWgrad(xs.addr(), dys.addr(), dws.addr(), nP, n.Cap, in, out, accumulate) {
		return
	}
	wm := matrix{ptr: dws.ptr, cols: out, rows: in, role: roleWhole}
	c.wgradGemm(half, xs, dys, wm, dws.addr(), nP, n, in, out, accumulate)
}

// wgradGemm issues dst (+)= x[:n]ᵀ·dy[:n], x [n.Cap, in] and dy [n.Cap,
// out] both BF16 (half) or both F32, dst F32 [in, out]: eagerly over the
// live rows (read back: a host sync), else over the capacity with x's and
// dy's padding rows read as zeros and w, the weight whose gradient this
// is (dst, or the matrix dst is summed into), whole.
func (c *call) wgradGemm(half bool, x, dy *buffer, w matrix, dst, nP uintptr, n backend.Count, in, out int, accumulate bool) {
	gemm := func(rows int, xa, dya uintptr) {
		c.gemm(gemmType{half, false}, true, false, in, out, rows, 1, xa, dya, beta(accumulate), dst)
	}
	if c.exactRows() {
		gemm(c.gemmRows(nP, n.Cap), x.addr(), dy.addr())
		return
	}
	c.capacityGemm([]matrix{
		{ptr: x.ptr, cols: words(half, in), rows: n.Cap, nP: nP, role: roleZero, free: x.paddingFree(n.Cap * in)},
		{ptr: dy.ptr, cols: words(half, out), rows: n.Cap, nP: nP, role: roleZero, free: dy.paddingFree(n.Cap * out)},
		w,
	}, func(addr []uintptr) { gemm(n.Cap, addr[0], addr[1]) })
}

// words is a row of cols elements in 4-byte words, as the padding stashes
// move them (a bfloat16 row of even width is cols/2 words).
func words(half bool, cols int) int {
	if half {
		return cols / 2
	}
	return cols
}

func beta(accumulate bool) float32 {
	if accumulate {
		return 1
	}
	return 0
}

// exactRows reports whether the Linear ops read the live count back
// (eager use without CapacityGemm) rather than multiply the capacity. The
// exact path first puts back any stashed padding rows.
func (c *call) exactRows() bool {
	if c.b.opt.CapacityGemm || c.b.capturing {
		return false
	}
	c.flushPads()
	return true
}

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

// gemmType is a product's element types: bfloat16 operands (ab) and a
// bfloat16 result (c), else float32.
type gemmType struct{ ab, c bool }

// gemm issues one row-major product of the types t; empty products only
// scale c.
func (c *call) gemm(t gemmType, transA, transB bool, m, n, k int, alpha float32, a, bm uintptr, beta float32, cm uintptr) {
	if !c.ok || m == 0 || n == 0 {
		return
	}
	b := c.b
	if k == 0 && beta == 1 {
		return
	}
	if k == 0 && beta == 0 {
		size := int64(4)
		if t.c {
			size = 2
		}
		c.memset(cm, 0, int64(m)*int64(n)*size)
		return
	}
	blas := c.blasOf()
	if blas == nil {
		return
	}
	b.gemmSc.alpha, b.gemmSc.beta = alpha, beta
	b.stats.Gemms++
	var err error
	if t.ab {
		err = blas.bf16GemmRowMajor(b.gemmSc, transA, transB, m, n, k, a, bm, cm, t.c)
	} else {
		err = blas.sgemmRowMajor(b.gemmSc, transA, transB, m, n, k, a, bm, cm)
	}
	if err != nil {
		c.fail(err)
	}
}
