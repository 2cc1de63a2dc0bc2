package cuda

// Tensor-core products for the Linear ops (kernels/gemm_tc.cu). With
// Options.TF32x3 the Linear ops run these kernels instead of cuBLAS
// wherever the shapes allow (every width a multiple of 4, 16-byte
// aligned operands): they read the live row count on the device, so they
// need neither a host sync nor padding stashes, multiply only live rows,
// and sum every output in an order that does not depend on the capacity
// (eager and replayed runs agree bitwise). Other shapes fall back to cuBLAS.

// tcSlice is the number of rows each block of the weight-gradient kernel
// sums (fixed, so that the result does not depend on the capacity).
const tcSlice = 512

// The kernels' output tile (rows and columns), k per stage, and the padded
// shared tiles of one stage: a row-major tile [tcTile][tcK + 4] or a k-major
// one [tcK][tcTile + 8] per operand; tcStages stages (TC_STAGES).
const (
	tcTile   = 128
	tcK      = 32
	tcRowT   = tcTile * (tcK + 4) * 4
	tcKT     = tcK * (tcTile + 8) * 4
	tcStages = 2
	tcNT     = tcStages * (tcRowT + tcRowT) // A and B row-major
	tcWgrad  = tcStages * (tcKT + tcKT)     // A and B k-major
)

// tcOn reports whether the Linear ops use the 3xTF32 kernels.
func (b *Backend) tcOn() bool { return b.opt.TF32x3 }

// tcFits reports whether the tensor-core kernels take a product: every
// width a multiple of 4 and every operand 16-byte aligned.
func tcFits(widths []int, ptrs []uintptr) bool {
	for _, w := range widths {
		if w%4 != 0 {
			return false
		}
	}
	for _, p := range ptrs {
		if p%16 != 0 {
			return false
		}
	}
	return true
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// maxGridYZ is the largest grid.y or grid.z of a launch; the weight
// gradient's slices go in grid.z (past 33M rows cuBLAS takes the product).
const maxGridYZ = 65535

// tcRows runs c[:live] (+)= a[:live]·B on tensor cores when the mode and
// shapes allow, and reports whether it did. a is [capM, k]; B is w [k, n]
// or, with nt, the transpose of w [n, k]; c is [capM, n]; live is at nP.
// The kernel takes B as [n, k], so w [k, n] is transposed first (a small
// launch: w is a weight).
func (c *call) tcRows(nt bool, a, w, out, nP uintptr, capM, n, k int, accumulate bool) bool {
	if !c.b.tcOn() || !tcFits([]int{n, k}, []uintptr{a, w, out}) {
		return false
	}
	c.flushPads()
	if capM == 0 || n == 0 || !c.ok {
		return true
	}
	if !nt {
		wt := c.scratch(scratchWT, int64(k)*int64(n)*4)
		c.args().ptr(w).i32(k).i32(n).ptr(wt)
		c.launch("transpose_f32", dim3{uint32(ceilDiv(n, 32)), uint32(ceilDiv(k, 32)), 1}, dim3{32, 8, 1}, 0)
		w = wt
	}
	const name = "gemm_tc_nt3"
	c.setSmem(name, tcNT)
	c.args().ptr(a).ptr(w).ptr(out).ptr(nP).i32(capM).i32(n).i32(k).i32(k).i32(k).i32(n).flag(accumulate)
	c.launch(name, dim3{uint32(ceilDiv(capM, tcTile)), uint32(ceilDiv(n, tcTile)), 1}, d1(256), tcNT)
	return true
}

// tcWgrad runs dw (+)= x[:live]ᵀ·dy[:live] on tensor cores when the mode and
// shapes allow, and reports whether it did: x [capK, m], dy [capK, n], dw
// [m, n]. Each slice of tcSlice rows writes a partial product; a second
// launch adds the live slices in order.
func (c *call) tcWgrad(x, dy, dw, nP uintptr, capK, m, n int, accumulate bool) bool {
	slices := max(1, ceilDiv(capK, tcSlice))
	if !c.b.tcOn() || !tcFits([]int{m, n}, []uintptr{x, dy, dw}) || slices > maxGridYZ {
		return false
	}
	c.flushPads()
	if m == 0 || n == 0 || !c.ok {
		return true
	}
	partial := c.scratch(scratchWgrad, int64(slices)*int64(m)*int64(n)*4)
	if capK > 0 {
		const name = "gemm_tc_wgrad3"
		c.setSmem(name, tcWgrad)
		c.args().ptr(x).ptr(dy).ptr(partial).ptr(nP).i32(capK).i32(m).i32(n).i32(tcSlice)
		c.launch(name, dim3{uint32(ceilDiv(m, tcTile)), uint32(ceilDiv(n, tcTile)), uint32(slices)}, d1(256), tcWgrad)
	}
	c.args().ptr(partial).ptr(nP).i32(capK).i32(tcSlice).i32(m * n).ptr(dw).flag(accumulate)
	c.launch("gemm_tc_reduce", d1(c.blocks(int64(m*n), 256)), d1(256), 0)
	return true
}
