package cuda

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// The graph attention ops (backend.Attention; kernels/gat.cu,
// gat_softmax.cu, gat_agg.cu). The forward ops and the coefficient
// gradients are deterministic (fixed orders: a warp per row, or a group of
// lanes per destination and head for the softmax); the scatters into
// sources (the gradients of el and of z) use float atomics, or with
// Options.Deterministic the edges sorted by source (aggregate_det.go) and
// a gather. The block kernels take the block's Bipartite flag (no self
// loop).

// headDotChunkRows is the rows per partial sum of HeadDotBackward's da:
// fixed, so that the sums do not depend on the capacity (below 4M rows).
const headDotChunkRows = 64

// HeadDot writes out[i, h] = Σ_f x[i, h·dim+f]·a[h·dim+f] for live rows:
// HeadDots' kernels without a second vector.
func (b *Backend) HeadDot(x backend.Buffer, n backend.Count, heads, dim int, a, out backend.Buffer) {
	c, ck := b.checkHeadDot(x, n, heads, dim, a, out)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(n.Cap)
	aligned := ck.x.ptr%16 == 0 && ck.a.ptr%16 == 0
	if suf, words, ok := flatWords(heads, dim, aligned); ok {
		c.launchHeadDotFlat(&ck, "head_dot_flat_"+suf, 0, 0, words, 0, 0, g, t, 0)
		return
	}
	if suf, gl, words, ok := headGroups(heads, dim, aligned, 1); ok {
		c.launchHeadDotGrouped(&ck, "head_dot_"+suf, 0, 0, words, gl, 0, 0, g, t, 0)
		return
	}
	c.launchHeadDot(&ck, 0, 0, 0, 0, g, t, 0)
}

// HeadDots is two HeadDots in one launch over rows [:max(n1, n2)], both
// vectors' sums from a row's one load: head_dot_{v4,v1}_{NQ} (lane groups
// per head) where the shape fits and x, a1 and a2 are 16-byte aligned,
// else head_dot; each sum is HeadDot's on the same kernel.
func (b *Backend) HeadDots(x backend.Buffer, n1, n2 backend.Count, heads, dim int, a1, a2, out1, out2 backend.Buffer) {
	c, ck := b.checkHeadDots(x, n1, n2, heads, dim, a1, a2, out1, out2)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(max(n1.Cap, n2.Cap))
	aligned := ck.x.ptr%16 == 0 && ck.a1.ptr%16 == 0 && ck.a2.ptr%16 == 0
	if suf, words, ok := flatWords(heads, dim, aligned); ok {
		c.launchHeadDotsFlat(&ck, "head_dot_flat_"+suf, words, g, t, 0)
		return
	}
	if suf, gl, words, ok := headGroups(heads, dim, aligned, 1); ok {
		c.launchHeadDotsGrouped(&ck, "head_dot_"+suf, words, gl, g, t, 0)
		return
	}
	c.launchHeadDotsPlain(&ck, g, t, 0)
}

// headDotChunks are the rows per partial sum of da and the chunks of rows
// [:rows]: headDotChunkRows, doubled while more than 65535 chunks.
func headDotChunks(rows int) (chunkRows, chunks int) {
	chunkRows = headDotChunkRows
	for (rows+chunkRows-1)/chunkRows > 65535 {
		chunkRows *= 2
	}
	return chunkRows, max(1, (rows+chunkRows-1)/chunkRows)
}

// HeadDotBackward: dx += dout1 ⊗ a1 on rows [:n1], then dout2 ⊗ a2 on
// rows [:n2] (without add, onto zeros instead of dx), in one kernel over
// rows [:max(n1, n2)] (head_dot_bwd_v4 on float4 words when dim % 4 == 0
// and x and dx are 16-byte aligned, else head_dot_bwd; both write the same
// bits); da1 and da2 are the column sums of dout·x, as partial sums per 64
// rows added in a fixed order (column_sums, one launch for both).
func (b *Backend) HeadDotBackward(x, dout1, dout2 backend.Buffer, n1, n2 backend.Count, heads, dim int, a1, a2, dx backend.Buffer, add bool, da1, da2 backend.Buffer) {
	c, ck := b.checkHeadDotBackward(x, dout1, dout2, n1, n2, heads, dim, a1, a2, dx, add, da1, da2)
	defer c.end()
	if !c.ok {
		return
	}
	rows, w := max(n1.Cap, n2.Cap), heads*dim
	chunkRows, chunks := headDotChunks(rows)
	size := int64(chunks) * int64(w) * 4
	p1 := c.scratch(scratchColsum, 2*size)
	p2 := p1 + uintptr(size)
	aligned := ck.x.ptr%16 == 0 && ck.dx.ptr%16 == 0
	if _, _, flat := flatWords(heads, dim, aligned); dim%4 == 0 && aligned || flat {
		name := "head_dot_bwd_v4"
		if flat {
			name = "head_dot_bwd_v4f"
		}
		c.launchHeadDotBwdVec(&ck, name, p1, p2, chunkRows, dim3{uint32((w/4 + 31) / 32), uint32(chunks), 1}, dim3{32, 8, 1}, 0)
	} else {
		c.launchHeadDotBwd(&ck, p1, p2, chunkRows, dim3{uint32((w + 31) / 32), uint32(chunks), 1}, dim3{32, 8, 1}, 0)
	}
	c.columnSums(chunkRows, w, colsum{p1, ck.n1P, n1.Cap, ck.da1.addr()}, colsum{p2, ck.n2P, n2.Cap, ck.da2.addr()})
}

// EdgeSoftmax writes GAT's attention coefficients (kernels/gat_softmax.cu):
// deterministic, a lane per destination and head for short lists, a group
// of lanes for medium ones, a warp for long ones.
func (b *Backend) EdgeSoftmax(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, coef backend.Buffer) {
	c, ck := b.checkEdgeSoftmax(blk, el, er, heads, slope, p, r, coef)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.headThreads(ck.blk.dstCap, heads)
	c.launchEdgeSoftmax(&ck, blk.Bipartite, g, t, 0)
}

// attWarps is the warps an SM the softmax kernels aim to fill (their
// launch bounds: four blocks of 256).
const attWarps = 32

// attPerWarp is the (destination, head) tasks a warp of the softmax
// kernels takes at a time (kernels/gat_softmax.cu's att_per, which the
// kernels derive from the grid): the largest power of two from 4 to 32
// that still gives the tasks at least attWarps warps an SM, 4 when none
// does. A warp's medium lists take four at a time, so few tasks a warp
// keep a small block's warps many; a bottom block's short lists run one a
// lane. The sums' order depends on a list's length alone, not on this.
func attPerWarp(tasks int64, sms int) int64 {
	per := int64(32)
	for per > 4 && (tasks+per-1)/per < int64(sms)*attWarps {
		per /= 2
	}
	return per
}

// headThreads is the launch of the softmax kernels: a warp per
// attPerWarp (destination, head) pairs of the capacity, in blocks of 256
// (a multiple of a warp, which att_sweep needs, and the kernels' launch
// bounds); the grid strides past its cap.
func (c *call) headThreads(dstCap, heads int) (dim3, dim3) {
	tasks := int64(dstCap) * int64(heads)
	per := attPerWarp(tasks, c.b.dev.sms)
	return d1(c.blocks((tasks+per-1)/per*32, 256)), d1(256)
}

// EdgeSoftmaxBackward writes der and del (kernels/gat_softmax.cu): del through
// float atomics, or with Options.Deterministic through the logits'
// gradients kept in float64 scratch and gathered per source.
func (b *Backend) EdgeSoftmaxBackward(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, dcoef, del, der backend.Buffer) {
	c, ck := b.checkEdgeSoftmaxBackward(blk, el, er, heads, slope, p, r, dcoef, del, der)
	defer c.end()
	if !c.ok {
		return
	}
	a := ck.blk
	g, t := c.headThreads(a.dstCap, heads)
	if !b.opt.Deterministic {
		c.memset(ck.del.addr(), 0, int64(a.srcCap)*int64(heads)*4)
		c.launchEdgeSoftmaxBwd(&ck, blk.Bipartite, 0, g, t, 0)
		return
	}
	dt := c.scratch(scratchGAT, int64((a.dstCap+a.edgeCap)*heads)*8)
	c.launchEdgeSoftmaxBwd(&ck, blk.Bipartite, dt, g, t, 0)
	s, ok := c.sortBySource(a, detSorted{})
	if !ok {
		return
	}
	c.launchGatDelGather(&ck, s.srcPtr, s.perm, dt, blk.Bipartite, d1(c.blocks(int64(a.srcCap)*int64(heads), 256)), d1(256), 0)
}

// headLanes is the lanes of the grouped kernels (kernels/gat.cuh's
// HeadLanes): log2 of the lanes per head (32 shared among the heads'
// power of two), ok false past 32 heads, and a head's width in words of
// kind v4 (float4, when dim % 4 == 0 and the buffers are aligned) or v1.
func headLanes(heads, dim int, aligned bool) (gl int, kind string, words int, ok bool) {
	if heads > 32 {
		return 0, "", 0, false
	}
	gl = 5
	for 1<<(5-gl) < heads {
		gl--
	}
	if dim%4 == 0 && aligned {
		return gl, "v4", dim / 4, true
	}
	return gl, "v1", dim, true
}

// headGroups picks a grouped kernel: its suffix, log2 of the lanes per
// head, and a head's width in words, for a row's columns dealt to the
// lanes of slices warps (a power of two; 1 but in HeadAggregate's
// forward). ok is false when the heads or the words per lane do not fit.
func headGroups(heads, dim int, aligned bool, slices int) (suf string, gl, words int, ok bool) {
	gl, kind, words, ok := headLanes(heads, dim, aligned)
	if !ok {
		return "", 0, 0, false
	}
	lanes := slices << gl
	per := (words + lanes - 1) / lanes
	// The words per lane the grouped kernels (head_dot_*, head_agg_*,
	// head_agg_bwd_*) come in (NQ).
	for _, nq := range [...]int{2, 4, 8} {
		if per <= nq {
			return fmt.Sprintf("%s_%d", kind, nq), gl, words, true
		}
	}
	return "", 0, 0, false
}

// flatHeads is the most heads the flat kernels take (kernels/gat_flat.cu's
// FLAT_HEADS).
const flatHeads = 4

// flatWords picks the flat kernels (kernels/gat_flat.cu) for heads whose
// width is not a whole number of float4 words while a row's is (heads·dim
// % 4 == 0, dim >= 4, the buffers 16-byte aligned): their suffix (the
// words a lane takes) and a row's words. ok is false where the grouped
// kernels take float4 words (dim % 4 == 0) or the shape does not fit.
func flatWords(heads, dim int, aligned bool) (suf string, words int, ok bool) {
	w := heads * dim
	if !aligned || dim%4 == 0 || dim < 4 || w%4 != 0 || heads > flatHeads {
		return "", 0, false
	}
	for _, nq := range [...]int{2, 4} {
		if w/4 <= 32*nq {
			return fmt.Sprint(nq), w / 4, true
		}
	}
	return "", 0, false
}

// headAggWarps is the warps an SM below which the HeadAggregate kernels
// split a destination's work among several warps (grid rows), at most
// headAggSlices of them: a block of few destinations (a top layer's)
// would otherwise leave most of the device idle, each warp walking its
// destination's positions one batch after another.
const (
	headAggWarps  = 32
	headAggSlices = 4
)

// columnSlices is the warps that share a destination's columns in
// HeadAggregate's grouped kernels (grid rows; kernels/gat.cuh's
// HeadLanes): doubled while the capacity's destinations give fewer than
// headAggWarps warps an SM and the last slice still starts within a head's
// words. Every column is summed in the same order at any slicing, so the
// capacity may choose it.
func (c *call) columnSlices(dstCap, heads, dim int, aligned bool) int {
	gl, _, words, ok := headLanes(heads, dim, aligned)
	p := 1
	for ok && p < headAggSlices && dstCap*p < c.b.dev.sms*headAggWarps && (2*p-1)<<gl < words {
		p *= 2
	}
	return p
}

// positionSlices is the warps that share a destination's positions in
// HeadAggregateBackward (grid rows; kernels/gat_agg.cu's PosSlice): for
// a block of fewer destinations than headAggWarps warps an SM, about four
// of the positions a destination has at capacity a warp, at most
// headAggSlices warps. Each position's dcoef is one warp's at any
// slicing, so the capacity may choose it.
func (c *call) positionSlices(dstCap, edgeCap int) int {
	dstCap = max(1, dstCap)
	spare := (c.b.dev.sms*headAggWarps + dstCap - 1) / dstCap
	per := (dstCap + edgeCap) / dstCap
	return max(1, min(headAggSlices, spare, (per+3)/4))
}

// HeadAggregate: a warp per destination, or for few destinations
// columnSlices warps a destination, deterministic (kernels/gat_agg.cu).
func (b *Backend) HeadAggregate(blk *backend.Block, coef, x backend.Buffer, heads, dim int, mean bool, out backend.Buffer, acc bool) {
	c, ck := b.checkHeadAggregate(blk, coef, x, heads, dim, mean, out, acc)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	aligned := ck.x.ptr%16 == 0 && ck.out.ptr%16 == 0
	if suf, words, ok := flatWords(heads, dim, aligned); ok {
		c.launchHeadAggFlat(&ck, "head_agg_flat_"+suf, blk.Bipartite, words, g, t, 0)
		return
	}
	slices := c.columnSlices(ck.blk.dstCap, heads, dim, aligned)
	if suf, gl, words, ok := headGroups(heads, dim, aligned, slices); ok {
		g.y = uint32(slices)
		c.launchHeadAggGrouped(&ck, "head_agg_"+suf, blk.Bipartite, words, gl, g, t, 0)
		return
	}
	c.launchHeadAgg(&ck, blk.Bipartite, g, t, 0)
}

// HeadAggregateBackward: dcoef per position (deterministic; a warp per
// destination, or for few destinations positionSlices warps a
// destination); dx through float atomics, or with Options.Deterministic
// sorted by source and gathered; either may be nil.
func (b *Backend) HeadAggregateBackward(blk *backend.Block, coef, x, dout backend.Buffer, heads, dim int, mean bool, dcoef, dx backend.Buffer) {
	c, ck := b.checkHeadAggregateBackward(blk, coef, x, dout, heads, dim, mean, dcoef, dx)
	defer c.end()
	if !c.ok {
		return
	}
	a := ck.blk
	g, t := c.warpRows(a.dstCap)
	g.y = uint32(c.positionSlices(a.dstCap, a.edgeCap))
	var dxp uintptr // dx of the scatter: none on the deterministic path
	if !b.opt.Deterministic {
		dxp = ck.dx.addr()
	}
	aligned := ck.x.ptr%16 == 0 && ck.dout.ptr%16 == 0 && ck.dx.addr()%16 == 0
	fsuf, fwords, flat := flatWords(heads, dim, aligned)
	switch suf, gl, words, ok := headGroups(heads, dim, aligned, 1); {
	case ck.dcoef == nil && dxp == 0: // nothing but the deterministic path's gather
	case flat:
		c.launchHeadAggBwdFlat(&ck, "head_agg_bwd_flat_"+fsuf, blk.Bipartite, fwords, dxp, g, t, 0)
	case ok:
		c.launchHeadAggBwdGrouped(&ck, "head_agg_bwd_"+suf, blk.Bipartite, words, gl, dxp, g, t, 0)
	default:
		c.launchHeadAggBwd(&ck, blk.Bipartite, dxp, g, t, 0)
	}
	if !b.opt.Deterministic || ck.dx == nil {
		return
	}
	s, ok := c.sortBySource(a, detSorted{})
	if !ok {
		return
	}
	gs, ts := c.warpRows(a.srcCap)
	c.launchHeadAggGather(&ck, s.srcPtr, s.perm, s.edgeDst, blk.Bipartite, gs, ts, 0)
}
