package cpu

import "github.com/fanout-gnn/fanout/backend"

// LayerMax folds layer k's output into the running maximum (see
// backend.JumpingKnowledge).
func (b *Backend) LayerMax(x backend.Buffer, n backend.Count, dim, k int, first bool, y, arg backend.Buffer) {
	c := b.begin("LayerMax")
	defer c.end()
	c.dim("dim", dim)
	rows, _ := c.count("n", n)
	xs := c.f32("x", x, n.Cap*dim)
	ys := c.f32("y", y, n.Cap*dim)
	as := c.i32("arg", arg, n.Cap*dim)
	if !c.ok {
		return
	}
	b.rows(rows, 64, func(lo, hi int) {
		for t := lo * dim; t < hi*dim; t++ {
			if first || xs[t] > ys[t] {
				ys[t], as[t] = xs[t], int32(k)
			}
		}
	})
}

// LayerMaxBackward writes layer k's share of the maximum's gradient.
func (b *Backend) LayerMaxBackward(dy, arg backend.Buffer, n backend.Count, dim, k int, accumulate bool, dx backend.Buffer) {
	c := b.begin("LayerMaxBackward")
	defer c.end()
	c.dim("dim", dim)
	rows, _ := c.count("n", n)
	dys := c.f32("dy", dy, n.Cap*dim)
	as := c.i32("arg", arg, n.Cap*dim)
	dxs := c.f32("dx", dx, n.Cap*dim)
	if !c.ok {
		return
	}
	b.rows(rows, 64, func(lo, hi int) {
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
