package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// TransposeBlock writes t from the stable counting sort of transpose: each
// source's edges in increasing edge order. EdgeDst is written for the
// edges listed; the other entries are left alone.
func (b *Backend) TransposeBlock(blk *backend.Block, t backend.Transposed) {
	c := b.begin("TransposeBlock")
	defer c.end()
	v := c.block(blk)
	srcCap := capOf(blk, func(k *backend.Block) int { return k.NumSrc.Cap })
	edgeCap := capOf(blk, func(k *backend.Block) int { return k.NumEdges.Cap })
	sp := c.i32("t.SrcPtr", t.SrcPtr, srcCap+1)
	pm := c.i32("t.Perm", t.Perm, edgeCap)
	ed := c.i32("t.EdgeDst", t.EdgeDst, edgeCap)
	if !c.ok {
		return
	}
	tr := b.transpose(&v)
	copy(sp, tr.start)
	copy(pm, tr.edge)
	for k, e := range tr.edge {
		ed[e] = tr.dst[k]
	}
}

// AggregateConcatBackward gathers each live source's gradient in t's
// order (see backend.Sparse), then passes it back through act as
// BiasActDropoutBackward does.
func (b *Backend) AggregateConcatBackward(blk *backend.Block, t backend.Transposed, edgeW, dcat backend.Buffer, dim int, act backend.ActGrad, dx backend.Buffer) {
	c := b.begin("AggregateConcatBackward")
	defer c.end()
	c.dim("dim", dim)
	checkP(&c, act.P)
	v := c.block(blk)
	srcCap := capOf(blk, func(k *backend.Block) int { return k.NumSrc.Cap })
	edgeCap := capOf(blk, func(k *backend.Block) int { return k.NumEdges.Cap })
	dstCap := capOf(blk, func(k *backend.Block) int { return k.NumDst.Cap })
	sp := c.i32("t.SrcPtr", t.SrcPtr, srcCap+1)
	pm := c.i32("t.Perm", t.Perm, edgeCap)
	ed := c.i32("t.EdgeDst", t.EdgeDst, edgeCap)
	ew := c.f32("edgeW", edgeW, edgeCap)
	dc := c.f32("dcat", dcat, dstCap*2*dim)
	var yb *buffer
	if act.Relu && act.P == 0 {
		yb = c.f32or16("act.Y", act.Y, srcCap*dim)
	}
	var ms []uint8
	if act.P > 0 {
		ms = c.u8("act.Mask", act.Mask, srcCap*dim)
	}
	dxb := c.f32or16("dx", dx, srcCap*dim)
	dbs := c.optF32("act.DBias", act.DBias, dim)
	if !c.ok {
		return
	}
	if j, ok := checkTransposed(sp, pm, ed, v.nSrc, v.nEdges, v.nDst); !ok {
		c.failf("t: source %d's edge list is not TransposeBlock's for this block (an offset, edge or destination out of range)", j)
		return
	}
	b.gathered = growF32(b.gathered, v.nSrc*dim)
	g := b.gathered
	w := 2 * dim
	b.rows(v.nSrc, max(1, 1024/dim), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := g[j*dim : (j+1)*dim]
			if j < v.nDst {
				copy(row, dc[j*w:j*w+dim])
			} else {
				clear(row)
			}
			for _, e := range pm[sp[j]:sp[j+1]] {
				i := int(ed[e])
				vec.Axpy(ew[e], dc[i*w+dim:(i+1)*w], row)
			}
		}
	})
	b.actBackward(g, v.nSrc, dim, act.Relu, act.P, yb, ms, dxb, dbs)
}

// checkTransposed reports the first live source whose entries in t are out
// of range (offsets decreasing or past the live edges, an edge id not
// live, a destination not live), so that a stale t is an error, not a
// fault.
func checkTransposed(sp, pm, ed []int32, nSrc, nEdges, nDst int) (int, bool) {
	if nSrc > 0 && sp[0] != 0 {
		return 0, false
	}
	for j := range nSrc {
		lo, hi := int(sp[j]), int(sp[j+1])
		if lo > hi || hi > nEdges {
			return j, false
		}
		for _, e := range pm[lo:hi] {
			if e < 0 || int(e) >= nEdges || ed[e] < 0 || int(ed[e]) >= nDst {
				return j, false
			}
		}
	}
	return 0, true
}

// growF32 returns s with length at least n (grow-only scratch).
func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
