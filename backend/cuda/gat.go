package cuda

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The graph attention ops (backend.Attention; kernels/gat.cu). The
// forward ops and the coefficient gradients are deterministic (one warp per
// row, fixed orders); the scatters into sources (the gradients of el and of
// z) use float atomics, or with Options.Deterministic the edges sorted by
// source (aggregate_det.go) and a gather.

// headDotChunkRows is the rows per partial sum of HeadDotBackward's da:
// fixed, so that the sums do not depend on the capacity (below 4M rows).
const headDotChunkRows = 64

// HeadDot writes out[i, h] = Σ_f x[i, h·dim+f]·a[h·dim+f] for live rows.
func (b *Backend) HeadDot(x backend.Buffer, n backend.Count, heads, dim int, a, out backend.Buffer) {
	c := b.begin("HeadDot")
	defer c.end()
	nP, _, xs, as := c.headDot(x, n, heads, dim, a)
	os := c.buf("out", out, backend.F32, n.Cap*heads)
	if !c.ok {
		return
	}
	g, t := c.warpRows(n.Cap)
	if suf, gl, words, ok := headGroups(heads, dim, xs.ptr%16 == 0 && as.ptr%16 == 0); ok {
		c.args().ptr(xs.addr()).ptr(nP).i32(n.Cap).i32(heads).i32(words).i32(gl).ptr(as.addr()).ptr(os.addr())
		c.launch("head_dot_"+suf, g, t, 0)
		return
	}
	c.args().ptr(xs.addr()).ptr(nP).i32(n.Cap).i32(heads).i32(dim).ptr(as.addr()).ptr(os.addr())
	c.launch("head_dot", g, t, 0)
}

// headDot validates the arguments HeadDot and its backward share: the
// count's address, the width heads·dim, x and a.
func (c *call) headDot(x backend.Buffer, n backend.Count, heads, dim int, a backend.Buffer) (nP uintptr, w int, xs, as *buffer) {
	c.dim("heads", heads)
	c.dim("dim", dim)
	w = c.width(heads, dim)
	nP = c.count("n", n)
	xs = c.buf("x", x, backend.F32, n.Cap*w)
	as = c.buf("a", a, backend.F32, w)
	return nP, w, xs, as
}

// width checks heads·dim against int32 kernel arithmetic.
func (c *call) width(heads, dim int) int {
	if c.ok && int64(heads)*int64(dim) > math.MaxInt32/64 {
		c.failf("heads %d × dim %d too wide", heads, dim)
	}
	return heads * dim
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
// rows [:n2], in one kernel (head_dot_bwd) over rows [:max(n1, n2)]; da1
// and da2 are the column sums of dout·x, as partial sums per 64 rows added
// in a fixed order (column_sums).
func (b *Backend) HeadDotBackward(x, dout1, dout2 backend.Buffer, n1, n2 backend.Count, heads, dim int, a1, a2, dx, da1, da2 backend.Buffer) {
	c := b.begin("HeadDotBackward")
	defer c.end()
	rows := max(n1.Cap, n2.Cap)
	n1P, w, xs, a1s := c.headDot(x, n1, heads, dim, a1)
	n2P, _, _, a2s := c.headDot(x, n2, heads, dim, a2)
	d1s := c.buf("dout1", dout1, backend.F32, n1.Cap*heads)
	d2s := c.buf("dout2", dout2, backend.F32, n2.Cap*heads)
	dxs := c.buf("dx", dx, backend.F32, rows*w)
	da1s := c.buf("da1", da1, backend.F32, w)
	da2s := c.buf("da2", da2, backend.F32, w)
	if !c.ok {
		return
	}
	chunkRows, chunks := headDotChunks(rows)
	size := int64(chunks) * int64(w) * 4
	p1 := c.scratch(scratchColsum, 2*size)
	p2 := p1 + uintptr(size)
	c.args().ptr(xs.addr()).ptr(d1s.addr()).ptr(d2s.addr()).ptr(n1P).i32(n1.Cap).ptr(n2P).i32(n2.Cap).i32(heads).
		i32(dim).ptr(a1s.addr()).ptr(a2s.addr()).ptr(dxs.addr()).ptr(p1).ptr(p2).i32(chunkRows)
	c.launch("head_dot_bwd", dim3{uint32((w + 31) / 32), uint32(chunks), 1}, dim3{32, 8, 1}, 0)
	c.columnSums(p1, n1P, n1.Cap, chunkRows, w, da1s.addr())
	c.columnSums(p2, n2P, n2.Cap, chunkRows, w, da2s.addr())
}

// attArgs are the validated arguments EdgeSoftmax and its backward share.
type attArgs struct {
	a              blockArgs
	el, er, keys   *buffer
	clock          uintptr
	thr            uint32
	scale          float32
	dropout        bool
	heads          int
	slope          float32
	seed           uint64
	stream         uint32
	coefN, coefCap int
}

func (c *call) attention(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand) attArgs {
	v := attArgs{heads: heads, slope: slope, dropout: p > 0}
	c.dim("heads", heads)
	v.thr, v.scale = c.dropoutArgs(p)
	v.a = c.block(blk)
	if !c.ok {
		return v
	}
	if math.IsNaN(float64(slope)) {
		c.failf("slope is NaN")
	}
	v.el = c.buf("el", el, backend.F32, v.a.srcCap*heads)
	v.er = c.buf("er", er, backend.F32, v.a.dstCap*heads)
	v.coefN = (v.a.dstCap + v.a.edgeCap) * heads
	if v.dropout {
		v.clock, _, _ = c.clock(r)
		v.keys = c.optBuf("r.Keys", r.Keys, backend.I32, v.a.dstCap)
		v.seed, v.stream = r.Seed, r.Stream
	}
	return v
}

// push adds ATT_ARGS to the launch's parameters.
func (v *attArgs) push(c *call) *argPack {
	a := v.a
	return c.args().ptr(a.indptr.addr()).ptr(a.indices.addr()).ptr(a.nd).i32(a.dstCap).ptr(a.ne).i32(a.edgeCap).
		ptr(a.ns).i32(a.srcCap).ptr(v.el.addr()).ptr(v.er.addr()).i32(v.heads).f32(v.slope).flag(v.dropout).
		u32(v.thr).f32(v.scale).i64(int64(v.seed)).ptr(v.clock).u32(v.stream).ptr(v.keys.addr())
}

// EdgeSoftmax writes GAT's attention coefficients (kernels/gat.cu):
// deterministic, one warp per destination.
func (b *Backend) EdgeSoftmax(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, coef backend.Buffer) {
	c := b.begin("EdgeSoftmax")
	defer c.end()
	v := c.attention(blk, el, er, heads, slope, p, r)
	cs := c.buf("coef", coef, backend.F32, v.coefN)
	if !c.ok {
		return
	}
	v.push(&c).ptr(cs.addr())
	g, t := c.warpRows(v.a.dstCap)
	c.launch("edge_softmax", g, t, 0)
}

// EdgeSoftmaxBackward writes der and del (kernels/gat.cu): del through
// float atomics, or with Options.Deterministic through the logits'
// gradients kept in float64 scratch and gathered per source.
func (b *Backend) EdgeSoftmaxBackward(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, dcoef, del, der backend.Buffer) {
	c := b.begin("EdgeSoftmaxBackward")
	defer c.end()
	v := c.attention(blk, el, er, heads, slope, p, r)
	dc := c.buf("dcoef", dcoef, backend.F32, v.coefN)
	dl := c.buf("del", del, backend.F32, v.a.srcCap*heads)
	dr := c.buf("der", der, backend.F32, v.a.dstCap*heads)
	if !c.ok {
		return
	}
	g, t := c.warpRows(v.a.dstCap)
	if !b.opt.Deterministic {
		c.memset(dl.addr(), 0, int64(v.a.srcCap)*int64(heads)*4)
		v.push(&c).ptr(dc.addr()).ptr(dl.addr()).ptr(dr.addr()).ptr(0)
		c.launch("edge_softmax_bwd", g, t, 0)
		return
	}
	dt := c.scratch(scratchGAT, int64(v.coefN)*8)
	v.push(&c).ptr(dc.addr()).ptr(dl.addr()).ptr(dr.addr()).ptr(dt)
	c.launch("edge_softmax_bwd", g, t, 0)
	s, ok := c.sortBySource(v.a, detSorted{})
	if !ok {
		return
	}
	a := v.a
	c.args().ptr(s.srcPtr).ptr(s.perm).ptr(dt).ptr(a.nd).i32(a.dstCap).ptr(a.ns).i32(a.srcCap).i32(heads).ptr(dl.addr())
	c.launch("gat_del_gather", d1(c.blocks(int64(a.srcCap)*int64(heads), 256)), d1(256), 0)
}

// headAggArgs are the validated arguments of HeadAggregate and its backward.
type headAggArgs struct {
	a          blockArgs
	coef, x    *buffer
	heads, dim int
	w, ow      int
	mean       bool
}

func (c *call) headAgg(blk *backend.Block, coef, x backend.Buffer, heads, dim int, mean bool) headAggArgs {
	v := headAggArgs{heads: heads, dim: dim, mean: mean}
	c.dim("heads", heads)
	c.dim("dim", dim)
	v.w = c.width(heads, dim)
	v.ow = v.w
	if mean {
		v.ow = dim
	}
	v.a = c.block(blk)
	if !c.ok {
		return v
	}
	v.coef = c.buf("coef", coef, backend.F32, (v.a.dstCap+v.a.edgeCap)*heads)
	v.x = c.buf("x", x, backend.F32, v.a.srcCap*v.w)
	return v
}

// push adds HA_ARGS to the launch's parameters.
func (v *headAggArgs) push(c *call) *argPack { return v.pushWords(c, v.dim) }

// pushWords adds HA_ARGS with a head's width given in words.
func (v *headAggArgs) pushWords(c *call, words int) *argPack {
	a := v.a
	return c.args().ptr(a.indptr.addr()).ptr(a.indices.addr()).ptr(a.nd).i32(a.dstCap).ptr(a.ne).i32(a.edgeCap).
		ptr(a.ns).i32(a.srcCap).i32(v.heads).i32(words).flag(v.mean)
}

// headAggWords are the words per lane the grouped kernels (head_dot_*,
// head_agg_*, head_agg_bwd_*) come in (NQ).
var headAggWords = [...]int{2, 4, 8}

// grouped picks the grouped kernel for the shape (headGroups), float4
// words when x and every buffer in bufs are 16-byte aligned.
func (v *headAggArgs) grouped(bufs ...*buffer) (suf string, gl, words int, ok bool) {
	aligned := v.x.ptr%16 == 0
	for _, b := range bufs {
		aligned = aligned && b.ptr%16 == 0
	}
	return headGroups(v.heads, v.dim, aligned)
}

// headGroups picks a grouped kernel (kernels/gat.cuh's HeadLanes): its
// suffix, log2 of the lanes per head, and a head's width in words (float4
// words when dim % 4 == 0 and the buffers are aligned). ok is false when
// the heads or the width do not fit.
func headGroups(heads, dim int, aligned bool) (suf string, gl, words int, ok bool) {
	if heads > 32 {
		return "", 0, 0, false
	}
	gl = 5
	for 1<<(5-gl) < heads {
		gl--
	}
	kind, words := "v1", dim
	if dim%4 == 0 && aligned {
		kind, words = "v4", dim/4
	}
	per := (words + 1<<gl - 1) >> gl
	for _, nq := range headAggWords {
		if per <= nq {
			return fmt.Sprintf("%s_%d", kind, nq), gl, words, true
		}
	}
	return "", 0, 0, false
}

// HeadAggregate: one warp per destination, deterministic
// (kernels/gat_agg.cu).
func (b *Backend) HeadAggregate(blk *backend.Block, coef, x backend.Buffer, heads, dim int, mean bool, out backend.Buffer) {
	c := b.begin("HeadAggregate")
	defer c.end()
	v := c.headAgg(blk, coef, x, heads, dim, mean)
	os := c.buf("out", out, backend.F32, v.a.dstCap*v.ow)
	if !c.ok {
		return
	}
	g, t := c.warpRows(v.a.dstCap)
	if suf, gl, words, ok := v.grouped(os); ok {
		v.pushWords(&c, words).i32(gl).ptr(v.coef.addr()).ptr(v.x.addr()).ptr(os.addr())
		c.launch("head_agg_"+suf, g, t, 0)
		return
	}
	v.push(&c).ptr(v.coef.addr()).ptr(v.x.addr()).ptr(os.addr())
	c.launch("head_agg", g, t, 0)
}

// HeadAggregateBackward: dcoef per destination (deterministic); dx through
// float atomics, or with Options.Deterministic sorted by source and
// gathered.
func (b *Backend) HeadAggregateBackward(blk *backend.Block, coef, x, dout backend.Buffer, heads, dim int, mean bool, dcoef, dx backend.Buffer) {
	c := b.begin("HeadAggregateBackward")
	defer c.end()
	v := c.headAgg(blk, coef, x, heads, dim, mean)
	if !c.ok {
		return
	}
	a := v.a
	ds := c.buf("dout", dout, backend.F32, a.dstCap*v.ow)
	dc := c.buf("dcoef", dcoef, backend.F32, (a.dstCap+a.edgeCap)*heads)
	dxs := c.buf("dx", dx, backend.F32, a.srcCap*v.w)
	if !c.ok {
		return
	}
	g, t := c.warpRows(a.dstCap)
	var dxp uintptr // dx of the scatter: none on the deterministic path
	if !b.opt.Deterministic {
		dxp = dxs.addr()
	}
	if suf, gl, words, ok := v.grouped(ds, dxs); ok {
		v.pushWords(&c, words).i32(gl).ptr(v.coef.addr()).ptr(v.x.addr()).ptr(ds.addr()).ptr(dc.addr()).ptr(dxp)
		c.launch("head_agg_bwd_"+suf, g, t, 0)
	} else {
		v.push(&c).ptr(v.coef.addr()).ptr(v.x.addr()).ptr(ds.addr()).ptr(dc.addr()).ptr(dxp)
		c.launch("head_agg_bwd", g, t, 0)
	}
	if !b.opt.Deterministic {
		return
	}
	s, ok := c.sortBySource(a, detSorted{})
	if !ok {
		return
	}
	c.args().ptr(s.srcPtr).ptr(s.perm).ptr(s.edgeDst).ptr(a.nd).i32(a.dstCap).ptr(a.ns).i32(a.srcCap).i32(heads).
		i32(dim).flag(mean).ptr(v.coef.addr()).ptr(ds.addr()).ptr(dxs.addr())
	gs, ts := c.warpRows(a.srcCap)
	c.launch("head_agg_gather", gs, ts, 0)
}
