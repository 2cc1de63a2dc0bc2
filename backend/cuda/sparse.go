package cuda

import "github.com/fanout-gnn/fanout/backend"

// blockArgs is a validated Block: its counts' addresses and buffers.
type blockArgs struct {
	nd, ne, ns              uintptr
	dstCap, edgeCap, srcCap int
	indptr, indices         *buffer
}

func (c *call) block(blk *backend.Block) blockArgs {
	var a blockArgs
	if !c.ok {
		return a
	}
	if blk == nil {
		c.failf("blk: nil block")
		return a
	}
	a.nd = c.count("blk.NumDst", blk.NumDst)
	a.ne = c.count("blk.NumEdges", blk.NumEdges)
	a.ns = c.count("blk.NumSrc", blk.NumSrc)
	a.dstCap, a.edgeCap, a.srcCap = blk.NumDst.Cap, blk.NumEdges.Cap, blk.NumSrc.Cap
	a.indptr = c.buf("blk.Indptr", blk.Indptr, backend.I32, a.dstCap+1)
	a.indices = c.buf("blk.Indices", blk.Indices, backend.I32, a.edgeCap)
	if c.ok && a.dstCap > a.srcCap {
		c.failf("blk: destination capacity %d exceeds source capacity %d", a.dstCap, a.srcCap)
	}
	return a
}

// warpRows is the grid of a kernel with one warp per destination row.
func (c *call) warpRows(rows int) (dim3, dim3) {
	return d1(c.blocks(int64(rows), 8)), d1(256)
}

// MeanWeights sets edgeW[e] = 1/s_i for the edges of live destination i,
// s_i its sampled degree. edgeW is F32 [NumEdges.Cap].
//
// The launch is deferred: when the next op is a forward aggregation
// (Aggregate, AggregateConcat, AggregateConcatTable) of the same block
// with edgeW as its weights, that launch computes the weights and writes
// them as it reads them (kernels/aggregate.cu's meanW), one launch less on
// a layer's chain; any other op launches mean_weights first.
func (b *Backend) MeanWeights(blk *backend.Block, edgeW backend.Buffer) {
	c := b.begin("MeanWeights")
	defer c.end()
	a := c.block(blk)
	ew := c.buf("edgeW", edgeW, backend.F32, a.edgeCap)
	if !c.ok {
		return
	}
	b.meanQ = meanQueue{a: a, ew: ew, set: true}
}

// meanQueue is a MeanWeights call not yet launched.
type meanQueue struct {
	a   blockArgs
	ew  *buffer
	set bool
}

// flushMean launches the queued MeanWeights call (mean_weights).
func (c *call) flushMean() {
	q := &c.b.meanQ
	if !q.set {
		return
	}
	a, ew := q.a, q.ew
	*q = meanQueue{}
	c.args().ptr(a.indptr.addr()).ptr(a.nd).i32(a.dstCap).ptr(a.ne).i32(a.edgeCap).ptr(ew.addr())
	g, t := c.warpRows(a.dstCap)
	c.launch("mean_weights", g, t, 0)
}

// takeMean returns the address a forward aggregation of block a weighted
// by ew passes as meanW: ew's when the queued MeanWeights call is for the
// same block and weights (the launch then does its work), else 0 after
// launching the queued call, if any.
func (c *call) takeMean(a blockArgs, ew *buffer) uintptr {
	q := &c.b.meanQ
	if !q.set {
		return 0
	}
	if ew != nil && q.ew == ew && q.a == a {
		*q = meanQueue{}
		return ew.addr()
	}
	c.flushMean()
	return 0
}

// GCNWeights sets selfW[i] = 1/d_i and edgeW[e] = (srcDeg[i]/s_i)/sqrt(d_i·d_j)
// with d = srcDeg + 1 (float64 inside, like the CPU backend).
func (b *Backend) GCNWeights(blk *backend.Block, srcDeg, edgeW, selfW backend.Buffer) {
	c := b.begin("GCNWeights")
	defer c.end()
	a := c.block(blk)
	deg := c.buf("srcDeg", srcDeg, backend.F32, a.srcCap)
	ew := c.buf("edgeW", edgeW, backend.F32, a.edgeCap)
	sw := c.buf("selfW", selfW, backend.F32, a.dstCap)
	if !c.ok {
		return
	}
	c.args().ptr(a.indptr.addr()).ptr(a.indices.addr()).ptr(deg.addr()).ptr(a.nd).i32(a.dstCap).ptr(a.ne).
		i32(a.edgeCap).ptr(a.ns).i32(a.srcCap).ptr(ew.addr()).ptr(sw.addr())
	g, t := c.warpRows(a.dstCap)
	c.launch("gcn_weights", g, t, 0)
}

// aggArgs are the validated arguments of Aggregate or AggregateBackward.
type aggArgs struct {
	a               blockArgs
	ew, sw, in, out *buffer
}

// aggregateArgs validates the arguments of Aggregate (inRows srcRows,
// outRows dstRows), AggregateConcat (outRows catRows) or AggregateBackward
// (the other way round). out holds outRows·dim elements.
func (c *call) aggregateArgs(blk *backend.Block, edgeW, selfW, in backend.Buffer, dim int, out backend.Buffer, inRows, outRows func(blockArgs) int) (aggArgs, bool) {
	var g aggArgs
	c.dim("dim", dim)
	g.a = c.block(blk)
	g.ew = c.optBuf("edgeW", edgeW, backend.F32, g.a.edgeCap)
	g.sw = c.optBuf("selfW", selfW, backend.F32, g.a.dstCap)
	if !c.ok {
		return g, false
	}
	g.in = c.buf("x", in, backend.F32, inRows(g.a)*dim)
	g.out = c.buf("out", out, backend.F32, outRows(g.a)*dim)
	return g, c.ok
}

// aggregate validates and launches aggregate_fwd*, aggregate_cat* or
// aggregate_bwd*.
func (c *call) aggregate(kind string, blk *backend.Block, edgeW, selfW, in backend.Buffer, dim int, out backend.Buffer, inRows, outRows func(blockArgs) int) {
	v, ok := c.aggregateArgs(blk, edgeW, selfW, in, dim, out, inRows, outRows)
	if !ok {
		return
	}
	a, ew, sw, xs, os := v.a, v.ew, v.sw, v.in, v.out
	var meanW uintptr
	if kind != "aggregate_bwd" {
		meanW = c.takeMean(a, ew)
	}
	name, vecs := kind+"1", dim
	if dim%4 == 0 && xs.ptr%16 == 0 && os.ptr%16 == 0 {
		name, vecs = kind+"4", dim/4
	}
	c.args().ptr(a.indptr.addr()).ptr(a.indices.addr()).ptr(ew.addr()).ptr(sw.addr()).ptr(meanW).ptr(a.nd).i32(a.dstCap).
		ptr(a.ne).i32(a.edgeCap).ptr(a.ns).i32(a.srcCap).i32(vecs).ptr(xs.addr()).ptr(os.addr())
	g, t := c.warpRows(a.dstCap)
	c.launch(name, g, t, 0)
}

func srcRows(a blockArgs) int { return a.srcCap }
func dstRows(a blockArgs) int { return a.dstCap }
func catRows(a blockArgs) int { return 2 * a.dstCap }

// Aggregate computes, for each live destination i,
// out[i, :] = selfW[i]·x[i, :] + Σ_{e in row i} edgeW[e]·x[Indices[e], :]
// with x [NumSrc.Cap, dim] and out [NumDst.Cap, dim]; selfW may be nil (no
// self term). One warp per destination, float4 columns when possible.
// Deterministic (edges in order).
func (b *Backend) Aggregate(blk *backend.Block, edgeW, selfW, x backend.Buffer, dim int, out backend.Buffer) {
	c := b.begin("Aggregate")
	defer c.end()
	c.aggregate("aggregate_fwd", blk, edgeW, selfW, x, dim, out, srcRows, dstRows)
}

// AggregateConcat writes, for each live destination i, out[i, :dim] =
// x[i, :] and out[i, dim:] = Σ_{e in row i} edgeW[e]·x[Indices[e], :]; out
// is [NumDst.Cap, 2·dim]. Same kernel as Aggregate, deterministic.
func (b *Backend) AggregateConcat(blk *backend.Block, edgeW, x backend.Buffer, dim int, out backend.Buffer) {
	c := b.begin("AggregateConcat")
	defer c.end()
	if isBF16(x) || isBF16(out) {
		// bfloat16 activations or concatenation: the table kernel over x's
		// own rows.
		c.aggregateTable(blk, edgeW, x, false, dim, out)
		return
	}
	c.aggregate("aggregate_cat", blk, edgeW, nil, x, dim, out, srcRows, catRows)
}

// AggregateConcatTable is AggregateConcat reading source j's row from
// table[SrcIDs[j], :] in place (F32, or BF16 widened): the same kernel, and
// so the same bits, as Gather followed by AggregateConcat. An id outside the
// table is reported by Sync.
func (b *Backend) AggregateConcatTable(blk *backend.Block, edgeW, table backend.Buffer, dim int, out backend.Buffer) {
	c := b.begin("AggregateConcatTable")
	defer c.end()
	c.aggregateTable(blk, edgeW, table, true, dim, out)
}

// aggregateTable launches aggregate_cat_table*: source j's row is
// table[SrcIDs[j]] when byID, else table's row j (a bfloat16 x of
// AggregateConcat, [NumSrc.Cap, dim]).
func (c *call) aggregateTable(blk *backend.Block, edgeW, table backend.Buffer, byID bool, dim int, out backend.Buffer) {
	c.dim("dim", dim)
	a := c.block(blk)
	ew := c.optBuf("edgeW", edgeW, backend.F32, a.edgeCap)
	var ids *buffer
	if blk != nil && byID {
		ids = c.buf("blk.SrcIDs", blk.SrcIDs, backend.I32, a.srcCap)
	}
	arg, need := "table", 0
	if !byID {
		arg, need = "x", a.srcCap*dim
	}
	tb := c.f32or16(arg, table, need)
	os := c.f32or16("out", out, 2*a.dstCap*dim)
	if !c.ok {
		return
	}
	half, halfOut := tb.dt == backend.BF16, os.dt == backend.BF16
	name, vecs := "aggregate_cat_table_f32x", dim
	if half {
		name = "aggregate_cat_table_bf16x"
	}
	four := dim%4 == 0 && tb.ptr%actAlign(half) == 0 && os.ptr%actAlign(halfOut) == 0
	if four {
		name, vecs = name+"4", dim/4
	} else {
		name += "1"
	}
	if halfOut {
		name += "_obf16"
	}
	if four && vecs <= 32 {
		name += "_n1" // one chunk of 32 words per pass (kernels/aggregate.cu)
	}
	meanW := c.takeMean(a, ew)
	c.args().ptr(a.indptr.addr()).ptr(a.indices.addr()).ptr(ew.addr()).ptr(0).ptr(meanW).ptr(a.nd).i32(a.dstCap).
		ptr(a.ne).i32(a.edgeCap).ptr(a.ns).i32(a.srcCap).i32(vecs).
		ptr(ids.addr()).i64(int64(tb.n / max(dim, 1))).ptr(c.b.errDev).ptr(tb.addr()).ptr(os.addr())
	g, t := c.warpRows(a.dstCap)
	c.launch(name, g, t, 0)
}

// AggregateBackward accumulates into dx [NumSrc.Cap, dim]:
// dx[Indices[e], :] += edgeW[e]·dout[i, :] and dx[i, :] += selfW[i]·dout[i, :]
// for live destinations i. By default it scatters with float atomicAdd, so
// the order of additions, and the last bits of dx, can vary between runs.
// With Options.Deterministic it sorts the edges by source and gathers
// (aggregate_det.go): bitwise reproducible, at some cost.
func (b *Backend) AggregateBackward(blk *backend.Block, edgeW, selfW, dout backend.Buffer, dim int, dx backend.Buffer) {
	c := b.begin("AggregateBackward")
	defer c.end()
	if !b.opt.Deterministic {
		c.aggregate("aggregate_bwd", blk, edgeW, selfW, dout, dim, dx, dstRows, srcRows)
		return
	}
	g, ok := c.aggregateArgs(blk, edgeW, selfW, dout, dim, dx, dstRows, srcRows)
	if ok {
		c.aggregateBackwardDet(g.a, g.ew, g.sw, g.in, g.out, dim)
	}
}
