package cuda

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Narrow products (kernels/skinny.cu): Linear and LinearBackwardWeight of
// float32 operands with at most skinnyMaxOut output columns (a GAT layer's
// scores x·u, [rows, in]·[in, heads], and their weights' gradients) run
// these kernels instead of cuBLAS in every mode (TF32x3 and capacity
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

// skinnyRows is the rows a warp of the forward kernel takes at a time (R
// of kernels/skinny.cu).
func skinnyRows(p int) int {
	if p >= 4 {
		return 32 / p
	}
	return 8
}

// skinnyKernel names the kernel of kind "fwd" or "wgrad" for out columns:
// float4 words when in % 4 == 0 and x is 16-byte aligned, else floats.
func skinnyKernel(kind string, out, in int, x *buffer) string {
	name := fmt.Sprintf("skinny_%s_p%d", kind, skinnyWidth(out))
	if in%4 != 0 || x.ptr%16 != 0 {
		name += "_v1"
	}
	return name
}

// skinnyLinear runs Linear on skinny_fwd_* when the shapes allow (float32
// x, out <= skinnyMaxOut, w fitting in shared memory) and reports whether
// it did. A grid of at most 8 blocks of 256 threads per multiprocessor
// strides over the capacity's rows.
func (c *call) skinnyLinear(ck *linearArgs) bool {
	if ck.x.dt != backend.F32 || ck.out > skinnyMaxOut {
		return false
	}
	p, words := skinnyWidth(ck.out), (ck.in+3)/4
	smem := 16 * p * words
	if smem > skinnyMaxSmem {
		return false
	}
	c.flushPads()
	blocks := max(1, min(ceilDiv(ck.n.Cap, 8*skinnyRows(p)), 8*c.b.dev.sms))
	c.launchSkinnyFwd(ck, skinnyKernel("fwd", ck.out, ck.in, ck.x), d1(uint32(blocks)), d1(256), smem)
	return true
}

// skinnyWgrad runs LinearBackwardWeight on skinny_wgrad_* when the shapes
// allow (float32 x and dy, out <= skinnyMaxOut) and reports whether it
// did: partial sums per chunk of skinnyChunk rows ([chunks, in·out] in
// scratch), added in order by column_sums into dw, or, when accumulating,
// into scratch and then onto dw (axpy: dw + the sums, one rounding).
func (c *call) skinnyWgrad(ck *linearBackwardWeightArgs) bool {
	wordBlocks := ceilDiv(ceilDiv(ck.in, 4), 32)
	if ck.x.dt != backend.F32 || ck.out > skinnyMaxOut || wordBlocks > maxGridYZ {
		return false
	}
	c.flushPads()
	chunks := max(1, ceilDiv(ck.n.Cap, skinnyChunk))
	dim := ck.in * ck.out
	sums := int64(0)
	if ck.accumulate {
		sums = int64(dim) * 4
	}
	partial := c.scratch(scratchColsum, int64(chunks)*int64(dim)*4+sums)
	c.launchSkinnyWgrad(ck, skinnyKernel("wgrad", ck.out, ck.in, ck.x), partial, skinnyChunk,
		dim3{uint32(chunks), uint32(wordBlocks), 1}, dim3{32, 8, 1}, 0)
	if !ck.accumulate {
		c.columnSums(partial, ck.nP, ck.n.Cap, skinnyChunk, dim, ck.dw.addr())
		return true
	}
	t := partial + uintptr(chunks)*uintptr(dim)*4
	c.columnSums(partial, ck.nP, ck.n.Cap, skinnyChunk, dim, t)
	c.launchAddScaled(1, t, ck.dw.addr(), int64(dim), d1(c.blocks(int64(dim), 256)), d1(256), 0)
	return true
}
