package cpu

import "github.com/fanout-gnn/fanout/backend"

// LayerMax folds layer k's output into the running maximum (see
// backend.JumpingKnowledge).
func (b *Backend) LayerMax(x backend.Buffer, n backend.Count, dim, k int, first bool, y, arg backend.Buffer) {
	c, ck := b.checkLayerMax(x, n, dim, k, first, y, arg)
	defer c.end()
	if !c.ok {
		return
	}
	xs, ys, as := ck.x, ck.y, ck.arg
	b.rows(ck.n, 64, func(lo, hi int) {
		for t := lo * dim; t < hi*dim; t++ {
			if first || xs[t] > ys[t] {
				ys[t], as[t] = xs[t], int32(k)
			}
		}
	})
}

// LayerMaxBackward writes layer k's share of the maximum's gradient.
func (b *Backend) LayerMaxBackward(dy, arg backend.Buffer, n backend.Count, dim, k int, accumulate bool, dx backend.Buffer) {
	c, ck := b.checkLayerMaxBackward(dy, arg, n, dim, k, accumulate, dx)
	defer c.end()
	if !c.ok {
		return
	}
	dys, as, dxs := ck.dy, ck.arg, ck.dx
	b.rows(ck.n, 64, func(lo, hi int) {
		for t := lo * dim; t < hi*dim; t++ {
			var g float32
			if as[t] == int32(k) {
				g = dys[t]
			}
			if accumulate {
				dxs[t] += g
			} else {
				dxs[t] = g
			}
		}
	})
}
