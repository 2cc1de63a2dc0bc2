package cuda

import "github.com/fanout-gnn/fanout/backend"

// HeadLinear's products over bfloat16 operands (a bfloat16 bottom layer):
// one cublasGemmEx product with the block-diagonal expansion of w, where
// float32 operands take one strided batched product per head. A head's
// block starts h·in elements into a row: 200 bytes for products-sim's
// bottom layer (in 100), which leaves odd heads' bfloat16 operands 8-byte
// aligned, and cuBLAS then takes kernels 2.8x slower than the even heads'
// (H200: 38.3 against 13.6 µs for the weight gradient's). The whole rows
// are aligned; the expansion multiplies heads times the products of the
// zero blocks, which bfloat16 tensor cores absorb where the products are
// bound by their bytes.

// headRowsHalf is headRows for BF16 a and w: y = a·wbd (back false: a
// [rows, heads·in], y F32 [rows, heads·dim]) or y = a·wbdᵀ (back true: a
// [rows, heads·dim], y F32 or BF16 [rows, heads·in]), wbd the BF16
// block-diagonal expansion of w [in, heads·dim] (blockDiagHalf); aCols and
// yCols are a's and y's widths, as headRows has them.
func (c *call) headRowsHalf(back bool, a, w, y *buffer, nP uintptr, n backend.Count, heads, in, dim, aCols, yCols int) {
	wbd := c.blockDiagHalf(w.addr(), in, heads, dim)
	t := gemmType{ab: true, c: y.dt == backend.BF16}
	wm := matrix{ptr: w.ptr, cols: words(true, heads*dim), rows: in, role: roleWhole}
	c.rowsGemm(t, back, a, wbd, wm, y, nP, n, aCols, yCols, false)
}

// headWgradHalf is HeadLinearBackwardWeight for BF16 x and dy: the weight
// gradient of the block-diagonal expansion, dwbd = x[:n]ᵀ·dy[:n] F32 [heads·in,
// heads·dim] (one cublasGemmEx product; the padding rows read as zeros
// when replayed), whose diagonal blocks block_diag_bwd copies into dw.
func (c *call) headWgradHalf(ck *headLinearBackwardWeightArgs, n backend.Count, heads, in, dim int) {
	hin, wd := heads*in, heads*dim
	dwbd := c.scratch(scratchHeads, int64(hin)*int64(wd)*4)
	dw := matrix{ptr: ck.dw.ptr, cols: wd, rows: in, role: roleWhole}
	c.wgradGemm(true, ck.x, ck.dy, dw, dwbd, ck.nP, n, hin, wd, false)
	c.args().ptr(dwbd).i32(in).i32(heads).i32(dim).ptr(ck.dw.addr())
	c.launch("block_diag_bwd", d1(c.blocks(int64(in*wd), 256)), d1(256), 0)
}

// blockDiagHalf expands the BF16 w [in, heads·dim] into scratch, BF16
// [heads·in, heads·dim] (block_diag: head h's columns of w in rows h·in..,
// zeros elsewhere).
func (c *call) blockDiagHalf(w uintptr, in, heads, dim int) uintptr {
	n := int64(heads*in) * int64(heads*dim)
	wbd := c.scratch(scratchHeads, n*2)
	if !c.ok {
		return 0
	}
	c.flushPads()
	c.args().ptr(w).i32(in).i32(heads).i32(dim).flag(true).ptr(wbd)
	c.launch("block_diag", d1(c.blocks(n, 256)), d1(256), 0)
	return wbd
}
