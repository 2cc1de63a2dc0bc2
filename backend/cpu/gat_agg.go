package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// headAgg is the validated arguments of HeadAggregate and its backward;
// bip marks a bipartite block (no self loop).
type headAgg struct {
	v            blockView
	bip          bool
	dstCap       int
	heads, dim   int
	w, ow        int // x's width heads·dim; out's width (dim with mean)
	mean         bool
	invH         float32
	coef, x, out []float32
}

// newHeadAgg is the view of the checked arguments HeadAggregate and its
// backward share; out is HeadAggregate's out or its backward's dout.
func newHeadAgg(blk *backend.Block, v blockView, coef, x []float32, heads, dim int, mean bool, out []float32) headAgg {
	g := headAgg{v: v, bip: blk.Bipartite, dstCap: blk.NumDst.Cap, heads: heads, dim: dim, w: heads * dim, ow: heads * dim, mean: mean,
		invH: 1 / float32(heads), coef: coef, x: x, out: out}
	if mean {
		g.ow = dim
	}
	return g
}

// HeadAggregate writes, per live destination, the coefficient-weighted sums
// of its self loop and edges per head, concatenated or averaged, or adds
// them to out with acc (see backend.Attention). float32 sums: the self
// loop (none in a bipartite block: the sum starts at 0), then edges in
// order; averaged heads are added in head order, then scaled by 1/heads.
func (b *Backend) HeadAggregate(blk *backend.Block, coef, x backend.Buffer, heads, dim int, mean bool, out backend.Buffer, acc bool) {
	c, ck := b.checkHeadAggregate(blk, coef, x, heads, dim, mean, out, acc)
	defer c.end()
	if !c.ok {
		return
	}
	g := newHeadAgg(blk, ck.blk, ck.coef, ck.x, heads, dim, mean, ck.out)
	b.rows(g.v.nDst, max(1, 1024/g.w), func(lo, hi int) {
		s, tot := make([]float32, dim), make([]float32, dim)
		for i := lo; i < hi; i++ {
			o := g.out[i*g.ow : (i+1)*g.ow]
			for h := range heads {
				g.headSum(i, h, s)
				switch {
				case mean && h == 0:
					copy(tot, s)
				case mean:
					for f, v := range s {
						tot[f] += v
					}
				default:
					storeHead(o[h*dim:(h+1)*dim], s, 1, acc)
				}
			}
			if mean {
				storeHead(o, tot, g.invH, acc)
			}
		}
	})
}

// headSum writes into s destination i's coefficient-weighted sum of head h
// (float32: the self loop, unless bip, then the valid edges in order).
func (g *headAgg) headSum(i, h int, s []float32) {
	sc := g.coef[i*g.heads+h]
	if g.bip {
		clear(s)
	} else {
		for f, xv := range g.x[i*g.w+h*g.dim : i*g.w+(h+1)*g.dim] {
			s[f] = sc * xv
		}
	}
	e0, e1 := g.v.edges(i)
	for e := e0; e < e1; e++ {
		j := int(g.v.indices[e])
		if j < 0 || j >= g.v.nSrc {
			continue
		}
		vec.Axpy(g.coef[(g.dstCap+e)*g.heads+h], g.x[j*g.w+h*g.dim:j*g.w+(h+1)*g.dim], s)
	}
}

// storeHead writes s·scale into o (scale 1: s as is), or adds it with acc.
func storeHead(o, s []float32, scale float32, acc bool) {
	for f, v := range s {
		if scale != 1 {
			v *= scale
		}
		if acc {
			v += o[f]
		}
		o[f] = v
	}
}

// HeadAggregateBackward overwrites dcoef (per destination: float64 dots of
// dout with the sources' rows) and accumulates dx, per source in
// destination order like AggregateBackward (see backend.Attention); either
// may be nil.
func (b *Backend) HeadAggregateBackward(blk *backend.Block, coef, x, dout backend.Buffer, heads, dim int, mean bool, dcoef, dx backend.Buffer) {
	c, ck := b.checkHeadAggregateBackward(blk, coef, x, dout, heads, dim, mean, dcoef, dx)
	defer c.end()
	if !c.ok {
		return
	}
	g := newHeadAgg(blk, ck.blk, ck.coef, ck.x, heads, dim, mean, ck.dout)
	dc, dxs := ck.dcoef, ck.dx
	if dc != nil {
		b.rows(g.v.nDst, max(1, 256/g.w), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				g.coefGrads(i, dc)
			}
		})
	}
	if dxs == nil {
		return
	}
	t := b.transpose(&g.v)
	b.rows(g.v.nSrc, max(1, 1024/g.w), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := dxs[j*g.w : (j+1)*g.w]
			k, end := t.start[j], t.start[j+1]
			if !g.bip && j < g.v.nDst {
				first, _ := g.v.edges(j)
				for ; k < end && int(t.edge[k]) < first; k++ {
					g.scatter(g.dstCap+int(t.edge[k]), int(t.dst[k]), row)
				}
				g.scatter(j, j, row)
			}
			for ; k < end; k++ {
				g.scatter(g.dstCap+int(t.edge[k]), int(t.dst[k]), row)
			}
		}
	})
}

// coefGrads writes dcoef for the positions of destination i.
func (g *headAgg) coefGrads(i int, dc []float32) {
	e0, e1 := g.v.edges(i)
	dr := g.out[i*g.ow : (i+1)*g.ow]
	for k := 0; k <= e1-e0; k++ {
		j, row := i, i
		if k > 0 {
			j, row = int(g.v.indices[e0+k-1]), g.dstCap+e0+k-1
		}
		valid := j >= 0 && j < g.v.nSrc && (k > 0 || !g.bip)
		for h := range g.heads {
			var s float64
			if valid {
				xr := g.x[j*g.w+h*g.dim : j*g.w+(h+1)*g.dim]
				d := dr
				if !g.mean {
					d = dr[h*g.dim : (h+1)*g.dim]
				}
				for f, xv := range xr {
					s += float64(d[f]) * float64(xv)
				}
				if g.mean {
					s /= float64(g.heads)
				}
			}
			dc[row*g.heads+h] = float32(s)
		}
	}
}

// scatter adds position row's weighted gradient of destination i into the
// source row dxRow.
func (g *headAgg) scatter(row, i int, dxRow []float32) {
	dr := g.out[i*g.ow : (i+1)*g.ow]
	for h := range g.heads {
		w := g.coef[row*g.heads+h]
		d := dr
		if g.mean {
			w *= g.invH
		} else {
			d = dr[h*g.dim : (h+1)*g.dim]
		}
		vec.Axpy(w, d, dxRow[h*g.dim:(h+1)*g.dim])
	}
}
