package cuda

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Narrow products (kernels/skinny.cu): Linear and LinearBackwardWeight of
// float32 operands with at most skinnyMaxOut output columns (a GAT layer's
// scores x·u, [rows, in]·[in, heads], and their weights' gradients), and
// SharedAttention's ScoreProducts and its backward (x float32 or bfloat16),
// run these kernels instead of cuBLAS in every mode (TF32x3 and capacity
// products included): they read x once, read the live row count on the
// device (no host sync, no padding stash) and add in float32 in an order
// that the widths alone fix, so the live rows give the same bits whatever
// the capacity, the mode or x's alignment.

// skinnyMaxOut is the widest output the narrow kernels take.
const skinnyMaxOut = 8

// skinnyChunk is the rows of one partial sum of the narrow weight gradient
// (fixed, so that its sums do not depend on the capacity).
const skinnyChunk = 256

// skinnyMaxSmem bounds the forward kernel's copy of w in shared memory
// (the default limit, no opt-in): 16·P·ceil(in/4) bytes.
const skinnyMaxSmem = 48 << 10

// skinnyWidth is out rounded up to a power of two: the kernels' P.
func skinnyWidth(out int) int {
	p := 1
	for p < out {
		p *= 2
	}
	return p
}

// skinnyKernel names the kernel of kind "fwd" or "wgrad" for out columns
// of x: _bf16 for a bfloat16 x; vectors of four when in % 4 == 0 and x is
// aligned to them (16 bytes, 8 for bfloat16), else one value at a time
// (_v1).
func skinnyKernel(kind string, out, in int, x *buffer) string {
	name := fmt.Sprintf("skinny_%s_p%d", kind, skinnyWidth(out))
	align := uintptr(16)
	if x.dt == backend.BF16 {
		name, align = name+"_bf16", 8
	}
	if in%4 != 0 || x.ptr%align != 0 {
		name += "_v1"
	}
	return name
}

// skinnyFwdSmem is the forward kernel's shared memory (w's copy) for out
// columns of in-wide rows.
func skinnyFwdSmem(out, in int) int { return 16 * skinnyWidth(out) * ((in + 3) / 4) }

// skinnyFwdGrid is the forward kernel's grid for cap rows, a thread a
// row: the blocks of 256 threads the device holds at once (residentBlocks,
// its shared memory smem), or fewer for few rows, striding over the rows.
// One wave: each block copies w once, and no second wave waits on a
// first's last blocks.
func (c *call) skinnyFwdGrid(name string, cap, smem int) dim3 {
	return d1(uint32(max(1, min(ceilDiv(cap, 256), c.residentBlocks(name, 256, smem)))))
}

// skinnyLinear runs Linear on skinny_fwd_* when the shapes allow (float32
// x, out <= skinnyMaxOut, w fitting in the default shared memory) and
// reports whether it did.
func (c *call) skinnyLinear(ck *linearArgs) bool {
	if ck.x.dt != backend.F32 || ck.out > skinnyMaxOut {
		return false
	}
	smem := skinnyFwdSmem(ck.out, ck.in)
	if smem > skinnyMaxSmem {
		return false
	}
	c.flushPads()
	name := skinnyKernel("fwd", ck.out, ck.in, ck.x)
	c.launchSkinnyFwd(ck, name, c.skinnyFwdGrid(name, ck.n.Cap, smem), d1(256), smem)
	return true
}

// ScoreProducts: skinny_fwd_* for both products in one launch (float32
// or bfloat16 x; u1's and u2's copies in shared memory, beyond the default
// limit where in needs it): a row below both counts is read once for both.
func (b *Backend) ScoreProducts(x backend.Buffer, n1, n2 backend.Count, u1, u2 backend.Buffer, in, heads int, y1, y2 backend.Buffer) {
	c, ck := b.checkScoreProducts(x, n1, n2, u1, u2, in, heads, y1, y2)
	defer c.end()
	if !c.ok {
		return
	}
	smem := 2 * skinnyFwdSmem(heads, in)
	name := skinnyKernel("fwd", heads, in, ck.x)
	c.setSmem(name, smem)
	c.flushPads()
	c.launchScoreFwd(&ck, name, c.skinnyFwdGrid(name, max(n1.Cap, n2.Cap), smem), d1(256), smem)
}

// skinnyWgrad runs LinearBackwardWeight on skinny_wgrad_* when the shapes
// allow (float32 x and dy, out <= skinnyMaxOut) and reports whether it did.
func (c *call) skinnyWgrad(ck *linearBackwardWeightArgs) bool {
	if ck.x.dt != backend.F32 || ck.out > skinnyMaxOut || skinnyWordBlocks(ck.in) > maxGridYZ {
		return false
	}
	name := skinnyKernel("wgrad", ck.out, ck.in, ck.x)
	c.skinnyWgradSums(ck.in, ck.out, ck.nP, ck.n.Cap, ck.accumulate, ck.dw.addr(), func(partial uintptr, grid, block dim3) {
		c.launchSkinnyWgrad(ck, name, partial, skinnyChunk, grid, block, 0)
	})
	return true
}

// ScoreProductsBackward: skinny_wgrad_* for both gradients in one launch
// (grid z: the product; float32 or bfloat16 x), their partial sums added
// by one column_sums.
func (b *Backend) ScoreProductsBackward(x, dy1, dy2 backend.Buffer, n1, n2 backend.Count, in, heads int, du1, du2 backend.Buffer) {
	c, ck := b.checkScoreProductsBackward(x, dy1, dy2, n1, n2, in, heads, du1, du2)
	defer c.end()
	if c.ok && skinnyWordBlocks(in) > maxGridYZ {
		c.failf("in: %d columns, at most %d", in, 128*maxGridYZ)
	}
	if !c.ok {
		return
	}
	c.flushPads()
	name := skinnyKernel("wgrad", heads, in, ck.x)
	dim, chunks := in*heads, max(1, ceilDiv(max(n1.Cap, n2.Cap), skinnyChunk))
	size := int64(chunks) * int64(dim) * 4
	p1 := c.scratch(scratchColsum, 2*size)
	p2 := p1 + uintptr(size)
	c.launchScoreWgrad(&ck, name, p1, skinnyChunk, p2, dim3{uint32(chunks), uint32(skinnyWordBlocks(in)), 2}, dim3{32, 8, 1}, 0)
	c.columnSums(skinnyChunk, dim, colsum{p1, ck.n1P, n1.Cap, ck.du1.addr()}, colsum{p2, ck.n2P, n2.Cap, ck.du2.addr()})
}

// skinnyWordBlocks is the weight-gradient grid's second dimension: blocks
// of 32 words of four columns.
func skinnyWordBlocks(in int) int { return ceilDiv(ceilDiv(in, 4), 32) }

// skinnyWgradSums runs a narrow weight gradient of in × out into dw (nP
// live rows of cap): launch writes partial sums per chunk of skinnyChunk
// rows ([chunks, in·out] in scratch), which column_sums adds in order into
// dw, or, when accumulating, into scratch and then onto dw (axpy: dw +
// the sums, one rounding).
func (c *call) skinnyWgradSums(in, out int, nP uintptr, cap int, accumulate bool, dw uintptr, launch func(partial uintptr, grid, block dim3)) {
	c.flushPads()
	chunks := max(1, ceilDiv(cap, skinnyChunk))
	dim := in * out
	sums := int64(0)
	if accumulate {
		sums = int64(dim) * 4
	}
	partial := c.scratch(scratchColsum, int64(chunks)*int64(dim)*4+sums)
	launch(partial, dim3{uint32(chunks), uint32(skinnyWordBlocks(in)), 1}, dim3{32, 8, 1})
	if !accumulate {
		c.columnSums(skinnyChunk, dim, colsum{partial, nP, cap, dw})
		return
	}
	t := partial + uintptr(chunks)*uintptr(dim)*4
	c.columnSums(skinnyChunk, dim, colsum{partial, nP, cap, t})
	c.launchAddScaled(1, t, dw, int64(dim), d1(c.blocks(int64(dim), 256)), d1(256), 0)
}
