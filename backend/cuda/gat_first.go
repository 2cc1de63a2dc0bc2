package cuda

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// The ops of a GAT layer that aggregates before it projects
// (kernels/gat_first.cu): deterministic, fixed orders (a warp per
// destination; a thread per element for the block-diagonal copies).

// SharedAggregate: one warp per destination, the lanes over the row's
// columns; every head from one read of each source row, several rows in
// flight (shared_agg_h*) when the heads and the row fit the lanes'
// registers, else eight heads per pass (shared_agg).
func (b *Backend) SharedAggregate(blk *backend.Block, coef, x backend.Buffer, heads, in int, out backend.Buffer) {
	c, ck := b.checkSharedAggregate(blk, coef, x, heads, in, out)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	bf16, half := x.DType() == backend.BF16, out.DType() == backend.BF16
	vec := quads(in, ck.x, ck.out)
	if hp, ok := sharedHeads(heads, in); ok {
		c.launchSharedAggHeads(&ck, fmt.Sprintf("shared_agg_h%d", hp), blk.Bipartite, bf16, half, vec, g, t, 0)
		return
	}
	c.launchSharedAgg(&ck, blk.Bipartite, bf16, half, vec, g, t, 0)
}

// quads reports whether the register kernels may read and write a lane's
// four columns at once (their vec): in a multiple of 4 and every operand
// aligned to 4 of its elements.
func quads(in int, ops ...*buffer) bool {
	for _, o := range ops {
		if o.ptr%uintptr(4*o.dt.Size()) != 0 {
			return false
		}
	}
	return in%4 == 0
}

// sharedHeads is the register kernels' head count (kernels/gat_first.cu's
// HP: heads rounded up to a power of two) for heads reading in-wide rows;
// ok is false past 8 heads or 128 columns (four a lane).
func sharedHeads(heads, in int) (hp int, ok bool) {
	if heads > 8 || in > 128 {
		return 0, false
	}
	hp = 1
	for hp < heads {
		hp *= 2
	}
	return hp, true
}

// SharedAggregateBackward: one warp per destination; the destination's
// dout row in registers and the heads' float32 sums reduced together
// (shared_agg_bwd_h*) where sharedHeads fits, else a float64 warp sum per
// position and head (shared_agg_bwd).
func (b *Backend) SharedAggregateBackward(blk *backend.Block, x, dout backend.Buffer, heads, in int, dcoef backend.Buffer) {
	c, ck := b.checkSharedAggregateBackward(blk, x, dout, heads, in, dcoef)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	bf16, half := x.DType() == backend.BF16, dout.DType() == backend.BF16
	vec := quads(in, ck.x, ck.dout)
	if hp, ok := sharedHeads(heads, in); ok {
		c.launchSharedAggBwdHeads(&ck, fmt.Sprintf("shared_agg_bwd_h%d", hp), blk.Bipartite, bf16, half, vec, g, t, 0)
		return
	}
	c.launchSharedAggBwd(&ck, blk.Bipartite, bf16, half, vec, g, t, 0)
}

// HeadLinear: one strided batched SGEMM, a product per head over the
// heads' column blocks (linear.go's capacity rules: eagerly the live rows,
// replayed the capacity); under TF32x3 Linear's tensor-core product with
// the block-diagonal expansion of w (blockDiagScratch says why); with
// BF16 operands one cublasGemmEx product with that expansion
// (headRowsHalf says why).
func (b *Backend) HeadLinear(x backend.Buffer, n backend.Count, w backend.Buffer, heads, in, dim int, y backend.Buffer) {
	c, ck := b.checkHeadLinear(x, n, w, heads, in, dim, y)
	defer c.end()
	if c.ok {
		c.headRows(false, ck.x, ck.w, ck.y, ck.nP, n, heads, in, dim)
	}
}

// HeadLinearBackwardData: dx_h = dy_h·w_hᵀ, one strided batched SGEMM (or
// under TF32x3, or with BF16 operands, as HeadLinear).
func (b *Backend) HeadLinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, heads, in, dim int, dx backend.Buffer) {
	c, ck := b.checkHeadLinearBackwardData(dy, n, w, heads, in, dim, dx)
	defer c.end()
	if c.ok {
		c.headRows(true, ck.dy, ck.w, ck.dx, ck.nP, n, heads, in, dim)
	}
}

// headRows is the row-wise product of HeadLinear (back false: y_h = a_h·w_h,
// a [rows, heads·in], y [rows, heads·dim]) or of its data gradient (back
// true: y_h = a_h·w_hᵀ, a [rows, heads·dim], y [rows, heads·in]), w [in,
// heads·dim].
func (c *call) headRows(back bool, a, w, y *buffer, nP uintptr, n backend.Count, heads, in, dim int) {
	hin, wd := heads*in, heads*dim
	aCols, yCols, k, m := hin, wd, in, dim
	if back {
		aCols, yCols, k, m = wd, hin, dim, in
	}
	if a.dt == backend.BF16 {
		c.headRowsHalf(back, a, w, y, nP, n, heads, in, dim, aCols, yCols)
		return
	}
	if wbd, ok := c.blockDiag(w.addr(), in, heads, dim, a.addr(), y.addr()); ok && c.tcRows(back, a.addr(), wbd, y.addr(), nP, n.Cap, yCols, aCols, false) {
		return
	}
	gemm := func(rows int) {
		c.headGemm(false, back, rows, m, k, strided{a.addr(), aCols, k}, strided{w.addr(), wd, dim},
			strided{y.addr(), yCols, m}, heads)
	}
	if c.exactRows() {
		gemm(c.gemmRows(nP, n.Cap))
		return
	}
	c.capacityGemm([]matrix{
		{ptr: a.ptr, cols: aCols, rows: n.Cap, nP: nP, role: roleRows},
		{ptr: w.ptr, cols: wd, rows: in, role: roleWhole},
		{ptr: y.ptr, cols: yCols, rows: n.Cap, nP: nP, role: roleFree},
	}, func([]uintptr) { gemm(n.Cap) })
}

// HeadLinearBackwardWeight: dw_h = x_hᵀ·dy_h summed over the rows. Under
// TF32x3 the tensor-core weight gradient of the block-diagonal expansion,
// whose diagonal blocks are dw (blockDiagScratch says why); else per head
// one strided batched SGEMM over chunks of the rows (splitRows), the parts
// summed by head_wgrad_sum with the rows the chunks leave; the padding
// rows read as zeros when replayed.
func (b *Backend) HeadLinearBackwardWeight(x, dy backend.Buffer, n backend.Count, heads, in, dim int, dw backend.Buffer) {
	c, ck := b.checkHeadLinearBackwardWeight(x, dy, n, heads, in, dim, dw)
	defer c.end()
	if !c.ok {
		return
	}
	hin, wd := heads*in, heads*dim
	if ck.x.dt == backend.BF16 {
		c.headWgradHalf(&ck, n, heads, in, dim)
		return
	}
	if dwbd, ok := c.blockDiagScratch(in, heads, dim, ck.x.addr(), ck.dy.addr()); ok && c.tcWgrad(ck.x.addr(), ck.dy.addr(), dwbd, ck.nP, n.Cap, hin, wd, false) {
		c.args().ptr(dwbd).i32(in).i32(heads).i32(dim).ptr(ck.dw.addr())
		c.launch("block_diag_bwd", d1(c.blocks(int64(in*wd), 256)), d1(256), 0)
		return
	}
	gemm := func(rows int, x, dy uintptr) {
		c.headWgrad(rows, heads, in, dim, x, dy, ck.dw.addr())
	}
	if c.exactRows() {
		gemm(c.gemmRows(ck.nP, n.Cap), ck.x.addr(), ck.dy.addr())
		return
	}
	c.capacityGemm([]matrix{
		{ptr: ck.x.ptr, cols: hin, rows: n.Cap, nP: ck.nP, role: roleZero, free: ck.x.paddingFree(n.Cap * hin)},
		{ptr: ck.dy.ptr, cols: wd, rows: n.Cap, nP: ck.nP, role: roleZero, free: ck.dy.paddingFree(n.Cap * wd)},
		{ptr: ck.dw.ptr, cols: wd, rows: in, role: roleWhole},
	}, func(addr []uintptr) { gemm(n.Cap, addr[0], addr[1]) })
}

// splitRows divides a weight gradient's sum over rows into parts of chunk
// rows (rows - parts·chunk, fewer than parts, left over): up to 64 parts of
// at least 768 rows, so that products of one or two output tiles each
// (GAT's per-head [100 × 64] over products-sim's 51,495 rows) fill the GPU,
// where cuBLAS gives each product its few tiles and the whole sum.
func splitRows(rows int) (parts, chunk int) {
	parts = min(max(rows/768, 1), 64)
	return parts, rows / parts
}

// headWgrad writes dw [in, heads·dim] = Σ over rows of x_hᵀ·dy_h per head
// (x [rows, heads·in], dy [rows, heads·dim] row-major): per head one
// strided batched SGEMM over the row chunks into scratch [parts][heads][in,
// dim], then head_wgrad_sum adds the parts and the rows left over.
func (c *call) headWgrad(rows, heads, in, dim int, x, dy, dw uintptr) {
	if !c.ok {
		return
	}
	hin, wd := heads*in, heads*dim
	if rows == 0 {
		c.memset(dw, 0, int64(in)*int64(wd)*4)
		return
	}
	parts, chunk := splitRows(rows)
	part := c.scratch(scratchHeads, int64(parts)*int64(hin)*int64(dim)*4)
	b, blas := c.b, c.blasOf()
	if blas == nil {
		return
	}
	for h := range heads {
		b.gemmSc.alpha, b.gemmSc.beta = 1, 0
		b.stats.Gemms++
		if err := blas.sgemmStridedRowMajor(b.gemmSc, true, false, in, dim, chunk,
			strided{x + uintptr(h*in*4), hin, chunk * hin}, strided{dy + uintptr(h*dim*4), wd, chunk * wd},
			strided{part + uintptr(h*in*dim*4), dim, hin * dim}, parts); err != nil {
			c.fail(err)
			return
		}
	}
	c.args().ptr(part).i32(parts).ptr(x).ptr(dy).i32(parts * chunk).i32(rows).i32(in).i32(heads).i32(dim).ptr(dw)
	c.launch("head_wgrad_sum", d1(c.blocks(int64(in*wd), 256)), d1(256), 0)
}

// blockDiagScratch is scratch for a block-diagonal [heads·in, heads·dim]
// matrix, when the tensor-core products (TF32x3) take HeadLinear's: their
// sums do not depend on the capacity, so that a replay equals eager bit for
// bit as Linear's do, which cuBLAS's products, whose kernel and split follow
// the row count, do not. ok is false otherwise, or where the tensor-core
// kernels would refuse the operands (tcFits), before any work: cuBLAS's
// per-head products then.
func (c *call) blockDiagScratch(in, heads, dim int, operands ...uintptr) (uintptr, bool) {
	hin, wd := heads*in, heads*dim
	if !c.b.tcOn() || !tcFits([]int{hin, wd}, operands) || !c.ok {
		return 0, false
	}
	return c.scratch(scratchHeads, int64(hin)*int64(wd)*4), true
}

// blockDiag expands w [in, heads·dim] into blockDiagScratch's matrix
// (block_diag: head h's columns of w in rows h·in.., zeros elsewhere), for
// a product with the operands.
func (c *call) blockDiag(w uintptr, in, heads, dim int, operands ...uintptr) (uintptr, bool) {
	wbd, ok := c.blockDiagScratch(in, heads, dim, operands...)
	if !ok {
		return 0, false
	}
	c.flushPads()
	c.args().ptr(w).i32(in).i32(heads).i32(dim).flag(false).ptr(wbd)
	c.launch("block_diag", d1(c.blocks(int64(heads*in)*int64(heads*dim), 256)), d1(256), 0)
	return wbd, true
}

// headGemm issues batch row-major products op(a_i) [m, k]·op(b_i) [k, n]
// into c_i (overwritten), whose blocks tile the rows of c (c.ld = batch·n,
// c.stride = n: the heads' columns); with k = 0 it zeros c (an empty
// sum). Over many rows (k <= m) they are one strided batched SGEMM; a sum
// longer than the rows (k > m: a block of few rows) is one SGEMM per head
// instead, which cuBLAS splits along k where its batched kernels give each
// c_i's few tiles the whole sum.
func (c *call) headGemm(transA, transB bool, m, n, k int, a, bm, cm strided, batch int) {
	if !c.ok || m == 0 || n == 0 {
		return
	}
	if k == 0 {
		c.memset(cm.ptr, 0, int64(m)*int64(batch*n)*4)
		return
	}
	b, blas := c.b, c.blasOf()
	if blas == nil {
		return
	}
	b.gemmSc.alpha, b.gemmSc.beta = 1, 0
	if k <= m {
		b.stats.Gemms++
		if err := blas.sgemmStridedRowMajor(b.gemmSc, transA, transB, m, n, k, a, bm, cm, batch); err != nil {
			c.fail(err)
		}
		return
	}
	for i := range batch {
		b.stats.Gemms++
		if err := blas.sgemmRowMajorLd(b.gemmSc, transA, transB, m, n, k, a.at(i), bm.at(i), cm.at(i)); err != nil {
			c.fail(err)
			return
		}
	}
}
