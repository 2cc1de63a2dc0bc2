package cuda

import "github.com/fanout-gnn/fanout/backend"

// blockArgs is a validated Block: its counts' addresses and buffers.
type blockArgs struct {
	nd, ne, ns              uintptr
	dstCap, edgeCap, srcCap int
	indptr, indices         *buffer
}

// block validates blk (argument name) for an op reading its topology.
func (c *call) block(name string, blk *backend.Block) blockArgs {
	var a blockArgs
	if !c.ok {
		return a
	}
	if blk == nil {
		c.failf("%s: nil block", name)
		return a
	}
	a.nd = c.count(name+".NumDst", blk.NumDst)
	a.ne = c.count(name+".NumEdges", blk.NumEdges)
	a.ns = c.count(name+".NumSrc", blk.NumSrc)
	a.dstCap, a.edgeCap, a.srcCap = blk.NumDst.Cap, blk.NumEdges.Cap, blk.NumSrc.Cap
	a.indptr = c.buf(name+".Indptr", blk.Indptr, backend.I32, a.dstCap+1)
	a.indices = c.buf(name+".Indices", blk.Indices, backend.I32, a.edgeCap)
	if c.ok && !blk.Bipartite && a.dstCap > a.srcCap {
		c.failf("%s: destination capacity %d exceeds source capacity %d", name, a.dstCap, a.srcCap)
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
	c, ck := b.checkMeanWeights(blk, edgeW)
	defer c.end()
	if !c.ok {
		return
	}
	b.meanQ = meanQueue{args: ck, set: true}
}

// meanQueue is a MeanWeights call not yet launched.
type meanQueue struct {
	args meanWeightsArgs
	set  bool
}

// flushMean launches the queued MeanWeights call (mean_weights).
func (c *call) flushMean() {
	q := &c.b.meanQ
	if !q.set {
		return
	}
	args := q.args
	*q = meanQueue{}
	g, t := c.warpRows(args.blk.dstCap)
	c.launchMeanWeights(&args, g, t, 0)
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
	if ew != nil && q.args.edgeW == ew && q.args.blk == a {
		*q = meanQueue{}
		return ew.addr()
	}
	c.flushMean()
	return 0
}

// GCNWeights sets selfW[i] = 1/d_i and edgeW[e] = (srcDeg[i]/s_i)/sqrt(d_i·d_j)
// with d = srcDeg + 1 (float64 inside, like the CPU backend).
func (b *Backend) GCNWeights(blk *backend.Block, srcDeg, edgeW, selfW backend.Buffer) {
	c, ck := b.checkGCNWeights(blk, srcDeg, edgeW, selfW)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchGcnWeights(&ck, g, t, 0)
}

// rowWords picks the kernel of an aggregation over rows of dim values:
// kind+"4" with float4 words when dim % 4 == 0 and x and out are 16-byte
// aligned, else kind+"1", and the row's width in those words.
func rowWords(kind string, dim int, x, out *buffer) (name string, words int) {
	if dim%4 == 0 && x.ptr%16 == 0 && out.ptr%16 == 0 {
		return kind + "4", dim / 4
	}
	return kind + "1", dim
}

// Aggregate computes, for each live destination i,
// out[i, :] = selfW[i]·x[i, :] + Σ_{e in row i} edgeW[e]·x[Indices[e], :]
// with x [NumSrc.Cap, dim] and out [NumDst.Cap, dim]; selfW may be nil (no
// self term). One warp per destination, float4 columns when possible.
// Deterministic (edges in order).
func (b *Backend) Aggregate(blk *backend.Block, edgeW, selfW, x backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregate(blk, edgeW, selfW, x, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	meanW := c.takeMean(ck.blk, ck.edgeW)
	name, vecs := rowWords("aggregate_fwd", dim, ck.x, ck.out)
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchAggregateFwd(&ck, name, meanW, vecs, g, t, 0)
}

// AggregateConcat writes, for each live destination i, out[i, :dim] =
// x[i, :] and out[i, dim:] = Σ_{e in row i} edgeW[e]·x[Indices[e], :]; out
// is [NumDst.Cap, 2·dim]. Same kernel as Aggregate, deterministic.
func (b *Backend) AggregateConcat(blk *backend.Block, edgeW, x backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregateConcat(blk, edgeW, x, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	meanW := c.takeMean(ck.blk, ck.edgeW)
	g, t := c.warpRows(ck.blk.dstCap)
	if ck.x.dt == backend.BF16 || ck.out.dt == backend.BF16 {
		// bfloat16 activations or concatenation: the table kernel over x's
		// own rows.
		name, vecs := tableKernel(dim, ck.x, ck.out)
		c.launchAggregateCatRows(&ck, name, meanW, vecs, g, t, 0)
		return
	}
	name, vecs := rowWords("aggregate_cat", dim, ck.x, ck.out)
	c.launchAggregateCat(&ck, name, meanW, vecs, g, t, 0)
}

// AggregateConcatTable is AggregateConcat reading source j's row from
// table[SrcIDs[j], :] in place (F32, or BF16 widened): the same kernel, and
// so the same bits, as Gather followed by AggregateConcat. An id outside the
// table is reported by Sync.
func (b *Backend) AggregateConcatTable(blk *backend.Block, edgeW, table backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregateConcatTable(blk, edgeW, table, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	meanW := c.takeMean(ck.blk, ck.edgeW)
	name, vecs := tableKernel(dim, ck.table, ck.out)
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchAggregateCatTable(&ck, name, meanW, vecs, g, t, 0)
}

// tableKernel picks the aggregate_cat_table* kernel for rows of dim values
// of tb (F32 or BF16) into out (F32 or BF16), and the row's width in its
// words.
func tableKernel(dim int, tb, os *buffer) (string, int) {
	return aggKernel("aggregate_cat_table_", dim, tb, nil, os)
}

// aggKernel picks the kernel of prefix (aggregate_cat_table_ or
// aggregate_cat_tiered_) for rows of dim values of tb (F32 or BF16; nil:
// no table, F32's kernel) and, where set, x (F32) into out (F32 or BF16),
// and the row's width in its words.
func aggKernel(prefix string, dim int, tb, x, os *buffer) (string, int) {
	half, halfOut := tb != nil && tb.dt == backend.BF16, os.dt == backend.BF16
	name, vecs := prefix+"f32x", dim
	if half {
		name = prefix + "bf16x"
	}
	four := dim%4 == 0 && (tb == nil || tb.ptr%actAlign(half) == 0) && (x == nil || x.ptr%16 == 0) &&
		os.ptr%actAlign(halfOut) == 0
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
	return name, vecs
}

// AggregateBackward accumulates into dx [NumSrc.Cap, dim]:
// dx[Indices[e], :] += edgeW[e]·dout[i, :] and dx[i, :] += selfW[i]·dout[i, :]
// for live destinations i. By default it scatters with float atomicAdd, so
// the order of additions, and the last bits of dx, can vary between runs.
// With Options.Deterministic it sorts the edges by source and gathers
// (aggregate_det.go): bitwise reproducible, at some cost.
func (b *Backend) AggregateBackward(blk *backend.Block, edgeW, selfW, dout backend.Buffer, dim int, dx backend.Buffer) {
	c, ck := b.checkAggregateBackward(blk, edgeW, selfW, dout, dim, dx)
	defer c.end()
	if !c.ok {
		return
	}
	if b.opt.Deterministic {
		c.aggregateBackwardDet(&ck)
		return
	}
	name, vecs := rowWords("aggregate_bwd", dim, ck.dout, ck.dx)
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchAggregateBwd(&ck, name, vecs, g, t, 0)
}
