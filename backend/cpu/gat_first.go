package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// The ops of a GAT layer that aggregates before it projects
// (backend.Attention's SharedAggregate, HeadLinear and their backwards).

// sharedRows reads source rows of x (F32, or BF16 widened into a scratch
// row) for the shared aggregate and its backward.
type sharedRows struct {
	x   *buffer
	in  int
	tmp []float32 // [in]: the widened row of a BF16 x
	acc []float32 // [heads·in]: a destination's row of a BF16 aggregate
}

// row is source j's row, valid until the next call.
func (r *sharedRows) row(j int) []float32 {
	if r.x.dt == backend.BF16 {
		widenRow(r.tmp, r.x.u16[j*r.in:(j+1)*r.in])
		return r.tmp
	}
	return r.x.f32[j*r.in : (j+1)*r.in]
}

// SharedAggregate writes, per live destination, every head's
// coefficient-weighted sum of the same in-wide source rows (see
// backend.Attention). float32 sums per element: the self loop's product
// (none in a bipartite block: the sum starts at 0), then each valid edge's
// added in order; a BF16 out takes the sums rounded.
func (b *Backend) SharedAggregate(blk *backend.Block, coef, x backend.Buffer, heads, in int, out backend.Buffer) {
	c, ck := b.checkSharedAggregate(blk, coef, x, heads, in, out)
	defer c.end()
	if !c.ok {
		return
	}
	v, cf, ob := ck.blk, ck.coef, ck.out
	bip, dstCap, w := blk.Bipartite, blk.NumDst.Cap, heads*in
	b.sharedDst(v, ck.x, in, 1024/w, func(i int, r *sharedRows) {
		oi := r.sums(ob, i, w)
		defer r.store(ob, i, oi)
		if bip {
			clear(oi)
		} else {
			xr := r.row(i)
			for h := range heads {
				sc := cf[i*heads+h]
				for f, xv := range xr {
					oi[h*in+f] = sc * xv
				}
			}
		}
		e0, e1 := v.edges(i)
		for e := e0; e < e1; e++ {
			j := int(v.indices[e])
			if j < 0 || j >= v.nSrc {
				continue
			}
			xr := r.row(j)
			for h := range heads {
				vec.Axpy(cf[(dstCap+e)*heads+h], xr, oi[h*in:(h+1)*in])
			}
		}
	})
}

// sums is destination i's row of out (w wide) to sum into: out's own, or
// for a BF16 out a float32 scratch row that store rounds into it.
func (r *sharedRows) sums(out *buffer, i, w int) []float32 {
	if out.dt == backend.BF16 {
		if len(r.acc) < w {
			r.acc = make([]float32, w)
		}
		return r.acc[:w]
	}
	return out.f32[i*w : (i+1)*w]
}

// store rounds a BF16 out's row i from sums's scratch row (an F32 out
// holds its sums already).
func (r *sharedRows) store(out *buffer, i int, row []float32) {
	if out.dt == backend.BF16 {
		roundRow(out.u16[i*len(row):(i+1)*len(row)], row)
	}
}

// sharedDst runs fn for every live destination of v, split among the
// threads in chunks of at least grain, each with a reader of x's rows.
func (b *Backend) sharedDst(v blockView, x *buffer, in, grain int, fn func(i int, r *sharedRows)) {
	b.rows(v.nDst, max(1, grain), func(lo, hi int) {
		r := sharedRows{x: x, in: in, tmp: make([]float32, in)}
		for i := lo; i < hi; i++ {
			fn(i, &r)
		}
	})
}

// SharedAggregateBackward overwrites dcoef for the live positions: per
// position and head the float64 dot of dout's head block (a BF16 dout
// widened) with the source's row, rounded once (0 without a live source).
// No gradient of x.
func (b *Backend) SharedAggregateBackward(blk *backend.Block, x, dout backend.Buffer, heads, in int, dcoef backend.Buffer) {
	c, ck := b.checkSharedAggregateBackward(blk, x, dout, heads, in, dcoef)
	defer c.end()
	if !c.ok {
		return
	}
	v, d, dc := ck.blk, ck.dout, ck.dcoef
	bip, dstCap, w := blk.Bipartite, blk.NumDst.Cap, heads*in
	b.sharedDst(v, ck.x, in, 256/w, func(i int, r *sharedRows) {
		e0, e1 := v.edges(i)
		di := r.sums(d, i, w)
		if d.dt == backend.BF16 {
			widenRow(di, d.u16[i*w:(i+1)*w])
		}
		for k := 0; k <= e1-e0; k++ {
			j, row := i, i
			if k > 0 {
				j, row = int(v.indices[e0+k-1]), dstCap+e0+k-1
			}
			if j < 0 || j >= v.nSrc || (k == 0 && bip) {
				clear(dc[row*heads : (row+1)*heads])
				continue
			}
			xr := r.row(j)
			for h := range heads {
				var s float64
				for f, xv := range xr {
					s += float64(di[h*in+f]) * float64(xv)
				}
				dc[row*heads+h] = float32(s)
			}
		}
	})
}

// HeadLinear multiplies each head's block of x's columns by that head's
// columns of w: one product per head over strided views (leading
// dimensions heads·in and heads·dim); BF16 operands widened (float32
// products and sums), as Linear's.
func (b *Backend) HeadLinear(x backend.Buffer, n backend.Count, w backend.Buffer, heads, in, dim int, y backend.Buffer) {
	c, ck := b.checkHeadLinear(x, n, w, heads, in, dim, y)
	defer c.end()
	if !c.ok {
		return
	}
	hin, wd := heads*in, heads*dim
	xs, ws := operands(ck.x, ck.w, max(ck.n, 1)*hin, in*wd) // a row at least: the heads' views start inside
	for h := range heads {
		b.sgemm(&c, false, false, ck.n, dim, in, xs[h*in:], hin, ws[h*dim:], wd, 0, ck.y[h*dim:], wd)
	}
}

// HeadLinearBackwardData: dx_h = dy_h·w_hᵀ per head; BF16 operands
// widened, a BF16 dx the float32 sums rounded.
func (b *Backend) HeadLinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, heads, in, dim int, dx backend.Buffer) {
	c, ck := b.checkHeadLinearBackwardData(dy, n, w, heads, in, dim, dx)
	defer c.end()
	if !c.ok {
		return
	}
	hin, wd := heads*in, heads*dim
	dys, ws := operands(ck.dy, ck.w, max(ck.n, 1)*wd, in*wd)
	dxs := ck.dx.f32
	if ck.dx.dt == backend.BF16 {
		dxs = make([]float32, max(ck.n, 1)*hin)
	}
	for h := range heads {
		b.sgemm(&c, false, true, ck.n, in, dim, dys[h*dim:], wd, ws[h*dim:], wd, 0, dxs[h*in:], hin)
	}
	if ck.dx.dt == backend.BF16 {
		roundRow(ck.dx.u16, dxs[:ck.n*hin])
	}
}

// HeadLinearBackwardWeight: dw_h = x_hᵀ·dy_h per head over the live rows;
// BF16 operands widened.
func (b *Backend) HeadLinearBackwardWeight(x, dy backend.Buffer, n backend.Count, heads, in, dim int, dw backend.Buffer) {
	c, ck := b.checkHeadLinearBackwardWeight(x, dy, n, heads, in, dim, dw)
	defer c.end()
	if !c.ok {
		return
	}
	hin, wd := heads*in, heads*dim
	xs, dys := operands(ck.x, ck.dy, max(ck.n, 1)*hin, max(ck.n, 1)*wd)
	for h := range heads {
		b.sgemm(&c, true, false, in, dim, ck.n, xs[h*in:], hin, dys[h*dim:], wd, 0, ck.dw[h*dim:], wd)
	}
}

// ScoreProducts: y1[:n1] = x[:n1]·u1 and y2[:n2] = x[:n2]·u2, a bfloat16
// x widened first (Linear's product for a float32 x), one after the other.
func (b *Backend) ScoreProducts(x backend.Buffer, n1, n2 backend.Count, u1, u2 backend.Buffer, in, heads int, y1, y2 backend.Buffer) {
	c, ck := b.checkScoreProducts(x, n1, n2, u1, u2, in, heads, y1, y2)
	defer c.end()
	if !c.ok {
		return
	}
	xs := floats(ck.x, max(ck.n1, ck.n2)*in)
	b.sgemm(&c, false, false, ck.n1, heads, in, xs, in, ck.u1, heads, 0, ck.y1, heads)
	b.sgemm(&c, false, false, ck.n2, heads, in, xs, in, ck.u2, heads, 0, ck.y2, heads)
}

// ScoreProductsBackward: du1 = x[:n1]ᵀ·dy1[:n1] and du2 = x[:n2]ᵀ·dy2[:n2],
// a bfloat16 x widened first (LinearBackwardWeight's product for a float32
// x).
func (b *Backend) ScoreProductsBackward(x, dy1, dy2 backend.Buffer, n1, n2 backend.Count, in, heads int, du1, du2 backend.Buffer) {
	c, ck := b.checkScoreProductsBackward(x, dy1, dy2, n1, n2, in, heads, du1, du2)
	defer c.end()
	if !c.ok {
		return
	}
	xs := floats(ck.x, max(ck.n1, ck.n2)*in)
	b.sgemm(&c, true, false, in, heads, ck.n1, xs, in, ck.dy1, heads, 0, ck.du1, heads)
	b.sgemm(&c, true, false, in, heads, ck.n2, xs, in, ck.dy2, heads, 0, ck.du2, heads)
}
