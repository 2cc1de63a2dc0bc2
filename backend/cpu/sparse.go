package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// blockView is a validated Block: live sizes clamped to capacity and the
// slices behind it. Edge offsets from Indptr are clamped to [0, nEdges], and
// edges whose source index lies outside [0, nSrc) are skipped by every op
// (that only happens in a block whose sources overflowed). neP is the
// int32 of NumEdges, for the ops that rewrite a block's edges.
type blockView struct {
	nDst, nEdges, nSrc int
	neP                *int32
	indptr, indices    []int32
}

// block validates blk (argument name) for an op reading its topology.
func (c *call) block(name string, blk *backend.Block) blockView {
	var v blockView
	if !c.ok {
		return v
	}
	if blk == nil {
		c.failf("%s: nil block", name)
		return v
	}
	v.nDst, _ = c.count(name+".NumDst", blk.NumDst)
	v.nEdges, v.neP = c.count(name+".NumEdges", blk.NumEdges)
	v.nSrc, _ = c.count(name+".NumSrc", blk.NumSrc)
	v.indptr = c.i32(name+".Indptr", blk.Indptr, blk.NumDst.Cap+1)
	v.indices = c.i32(name+".Indices", blk.Indices, blk.NumEdges.Cap)
	if c.ok && !blk.Bipartite && blk.NumDst.Cap > blk.NumSrc.Cap {
		c.failf("%s: destination capacity %d exceeds source capacity %d", name, blk.NumDst.Cap, blk.NumSrc.Cap)
	}
	return v
}

// edges is the clamped edge range of destination i.
func (v *blockView) edges(i int) (lo, hi int) {
	lo = min(max(int(v.indptr[i]), 0), v.nEdges)
	hi = min(max(int(v.indptr[i+1]), lo), v.nEdges)
	return lo, hi
}

// MeanWeights sets edgeW[e] = 1/s_i for the edges e of destination i, s_i its
// sampled degree. edgeW is F32 [NumEdges.Cap].
func (b *Backend) MeanWeights(blk *backend.Block, edgeW backend.Buffer) {
	c, ck := b.checkMeanWeights(blk, edgeW)
	defer c.end()
	if !c.ok {
		return
	}
	v, ew := ck.blk, ck.edgeW
	b.rows(v.nDst, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := v.edges(i)
			w := 1 / float32(e1-e0)
			for e := e0; e < e1; e++ {
				ew[e] = w
			}
		}
	})
}

// GCNWeights sets selfW[i] = 1/d_i and edgeW[e] = (srcDeg[i]/s_i)/sqrt(d_i·d_j)
// with d = srcDeg + 1 and s_i the sampled degree of destination i; srcDeg
// F32 [NumSrc.Cap], edgeW F32 [NumEdges.Cap], selfW F32 [NumDst.Cap].
func (b *Backend) GCNWeights(blk *backend.Block, srcDeg, edgeW, selfW backend.Buffer) {
	c, ck := b.checkGCNWeights(blk, srcDeg, edgeW, selfW)
	defer c.end()
	if !c.ok {
		return
	}
	v, deg, ew, sw := ck.blk, ck.srcDeg, ck.edgeW, ck.selfW
	b.rows(v.nDst, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			di := float64(deg[i]) + 1
			sw[i] = float32(1 / di)
			e0, e1 := v.edges(i)
			if e1 == e0 {
				continue
			}
			scale := float64(deg[i]) / float64(e1-e0)
			for e := e0; e < e1; e++ {
				j := int(v.indices[e])
				if j < 0 || j >= v.nSrc {
					continue
				}
				ew[e] = float32(scale / math.Sqrt(di*(float64(deg[j])+1)))
			}
		}
	})
}

// Aggregate computes, for each live destination i,
// out[i, :] = selfW[i]·x[i, :] + Σ_{e in row i} edgeW[e]·x[Indices[e], :],
// accumulated in float32 in edge order after the self term. x is
// [NumSrc.Cap, dim], out [NumDst.Cap, dim]; selfW may be nil.
func (b *Backend) Aggregate(blk *backend.Block, edgeW, selfW, x backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregate(blk, edgeW, selfW, x, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	xs := ck.x
	b.aggregateRows(ck.blk, ck.edgeW, ck.selfW, dim, ck.out, nil, false, func(j int, _ []float32) []float32 {
		return xs[j*dim : (j+1)*dim]
	})
}

// AggregateConcat writes GraphSAGE's concatenation for each live
// destination i: out[i, :dim] = x[i, :] and out[i, dim:] = Σ_{e in row i}
// edgeW[e]·x[Indices[e], :] (edge order), out [NumDst.Cap, 2·dim].
func (b *Backend) AggregateConcat(blk *backend.Block, edgeW, x backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregateConcat(blk, edgeW, x, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	xb := ck.x
	b.aggregateRows(ck.blk, ck.edgeW, nil, dim, ck.out.f32, ck.out.u16, true, func(j int, tmp []float32) []float32 {
		if xb.dt == backend.BF16 { // bfloat16 activations, widened as read
			widenRow(tmp, xb.u16[j*dim:(j+1)*dim])
			return tmp
		}
		return xb.f32[j*dim : (j+1)*dim]
	})
}

// AggregateConcatTable is AggregateConcat reading source j's row from
// table[SrcIDs[j], :] (F32, or BF16 widened) in place: the same additions in
// the same order as Gather followed by AggregateConcat.
func (b *Backend) AggregateConcatTable(blk *backend.Block, edgeW, table backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregateConcatTable(blk, edgeW, table, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	v, tb, ids := ck.blk, ck.table, ck.blkSrcIDs
	rows := tb.Len() / dim
	for j, id := range ids[:v.nSrc] {
		if id < 0 || int(id) >= rows {
			c.raise(errcode.TableID, j, int(id), rows)
			return
		}
	}
	b.aggregateRows(v, ck.edgeW, nil, dim, ck.out.f32, ck.out.u16, true, func(j int, tmp []float32) []float32 {
		r := int(ids[j]) * dim
		if tb.dt == backend.BF16 {
			widenRow(tmp, tb.u16[r:r+dim])
			return tmp
		}
		return tb.f32[r : r+dim]
	})
}

// aggregateRows runs Aggregate, or AggregateConcat when cat is set (out
// rows of 2·dim: the destination's own row, then the sum), over source
// rows given by row(j, tmp), which may fill and return tmp (a scratch row
// of dim). out is of (float32) or, when ou is set, ou (bfloat16: the
// concatenation rounded).
func (b *Backend) aggregateRows(v blockView, ew, sw []float32, dim int, of []float32, ou []uint16, cat bool, row func(j int, tmp []float32) []float32) {
	stride := dim
	if cat {
		stride = 2 * dim
	}
	half := ou != nil
	b.rows(v.nDst, max(1, 1024/dim), func(lo, hi int) {
		tmp := make([]float32, dim)
		var wide []float32 // a float32 row to round, for a bfloat16 out
		if half {
			wide = make([]float32, stride)
		}
		for i := lo; i < hi; i++ {
			o := wide
			if !half {
				o = of[i*stride : (i+1)*stride]
			}
			whole := o
			var xi []float32 // the destination's own row, where read
			if cat || sw != nil {
				xi = row(i, tmp)
			}
			if cat {
				copy(o, xi)
				o = o[dim:]
			}
			if sw != nil {
				s := sw[i]
				for k, xv := range xi {
					o[k] = s * xv
				}
			} else {
				clear(o)
			}
			e0, e1 := v.edges(i)
			for e := e0; e < e1; e++ {
				j := int(v.indices[e])
				if j < 0 || j >= v.nSrc {
					continue
				}
				vec.Axpy(ew[e], row(j, tmp), o)
			}
			if half {
				roundRow(ou[i*stride:(i+1)*stride], whole)
			}
		}
	})
}

// AggregateBackward accumulates into dx [NumSrc.Cap, dim], for each live
// destination i in order: selfW[i]·dout[i, :] into dx[i, :], then
// edgeW[e]·dout[i, :] into dx[Indices[e], :] for the edges of i in order.
// It runs as a gather over sources: the edges are first grouped by source
// (a stable counting sort), so each row of dx receives its additions in
// exactly the order above whatever the thread count.
func (b *Backend) AggregateBackward(blk *backend.Block, edgeW, selfW, dout backend.Buffer, dim int, dx backend.Buffer) {
	c, ck := b.checkAggregateBackward(blk, edgeW, selfW, dout, dim, dx)
	defer c.end()
	if !c.ok {
		return
	}
	v, ew, sw, ds, dxs := ck.blk, ck.edgeW, ck.selfW, ck.dout, ck.dx
	t := b.transpose(&v)
	b.rows(v.nSrc, max(1, 1024/dim), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := dxs[j*dim : (j+1)*dim]
			k, end := t.start[j], t.start[j+1]
			if sw != nil && j < v.nDst {
				// Edges of destinations before j come first, then j's self term.
				first, _ := v.edges(j)
				for ; k < end && int(t.edge[k]) < first; k++ {
					vec.Axpy(ew[t.edge[k]], ds[int(t.dst[k])*dim:int(t.dst[k]+1)*dim], row)
				}
				vec.Axpy(sw[j], ds[j*dim:(j+1)*dim], row)
			}
			for ; k < end; k++ {
				vec.Axpy(ew[t.edge[k]], ds[int(t.dst[k])*dim:int(t.dst[k]+1)*dim], row)
			}
		}
	})
}

// transposed lists a block's live edges grouped by source: the edges of
// source j are edge[start[j]:start[j+1]] in increasing edge order, with
// their destinations in dst. Backed by backend scratch (valid until the next
// op).
type transposed struct {
	start     []int32 // [nSrc+1]
	edge, dst []int32 // [live edges with a valid source]
}

// transpose groups v's edges by source with a stable counting sort.
func (b *Backend) transpose(v *blockView) transposed {
	nSrc := v.nSrc
	b.tStart = growI32(b.tStart, nSrc+1)
	b.tCursor = growI32(b.tCursor, nSrc)
	start, cursor := b.tStart[:nSrc+1], b.tCursor[:nSrc]
	clear(start)
	for i := range v.nDst {
		e0, e1 := v.edges(i)
		for _, j := range v.indices[e0:e1] {
			if j >= 0 && int(j) < nSrc {
				start[j+1]++
			}
		}
	}
	for j := range nSrc {
		start[j+1] += start[j]
		cursor[j] = start[j]
	}
	n := int(start[nSrc])
	b.tEdge = growI32(b.tEdge, n)
	b.tDst = growI32(b.tDst, n)
	edge, dst := b.tEdge[:n], b.tDst[:n]
	for i := range v.nDst {
		e0, e1 := v.edges(i)
		for e := e0; e < e1; e++ {
			j := v.indices[e]
			if j >= 0 && int(j) < nSrc {
				k := cursor[j]
				edge[k], dst[k] = int32(e), int32(i)
				cursor[j]++
			}
		}
	}
	return transposed{start: start, edge: edge, dst: dst}
}

// growI32 returns s with length at least n (grow-only scratch).
func growI32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
