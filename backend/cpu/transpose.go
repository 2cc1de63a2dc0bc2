package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// TransposeBlock writes t from the stable counting sort of transpose: each
// source's edges in increasing edge order. EdgeDst is written for the
// edges listed; the other entries are left alone.
func (b *Backend) TransposeBlock(blk *backend.Block, t backend.Transposed) {
	c, ck := b.checkTransposeBlock(blk, t)
	defer c.end()
	if !c.ok {
		return
	}
	v, sp, pm, ed := ck.blk, ck.tSrcPtr, ck.tPerm, ck.tEdgeDst
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
	c, ck := b.checkAggregateConcatBackward(blk, t, edgeW, dcat, dim, act, dx)
	defer c.end()
	if !c.ok {
		return
	}
	v, sp, pm, ed, ew, dc := ck.blk, ck.tSrcPtr, ck.tPerm, ck.tEdgeDst, ck.edgeW, ck.dcat
	yb, ms, dxb, dbs := ck.actY, ck.actMask, ck.dx, ck.actDBias
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
