package cuda

import "github.com/fanout-gnn/fanout/backend"

// LayerMax folds layer k's output into the running maximum
// (kernels/jk.cu).
func (b *Backend) LayerMax(x backend.Buffer, n backend.Count, dim, k int, first bool, y, arg backend.Buffer) {
	c := b.begin("LayerMax")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, n.Cap*dim)
	ys := c.buf("y", y, backend.F32, n.Cap*dim)
	as := c.buf("arg", arg, backend.I32, n.Cap*dim)
	if !c.ok {
		return
	}
	c.args().ptr(xs.addr()).ptr(nP).i32(n.Cap).i32(dim).i32(k).flag(first).ptr(ys.addr()).ptr(as.addr())
	c.launch("layer_max", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// LayerMaxBackward writes layer k's share of the maximum's gradient
// (kernels/jk.cu).
func (b *Backend) LayerMaxBackward(dy, arg backend.Buffer, n backend.Count, dim, k int, accumulate bool, dx backend.Buffer) {
	c := b.begin("LayerMaxBackward")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	dys := c.buf("dy", dy, backend.F32, n.Cap*dim)
	as := c.buf("arg", arg, backend.I32, n.Cap*dim)
	dxs := c.buf("dx", dx, backend.F32, n.Cap*dim)
	if !c.ok {
		return
	}
	c.args().ptr(dys.addr()).ptr(as.addr()).ptr(nP).i32(n.Cap).i32(dim).i32(k).flag(accumulate).ptr(dxs.addr())
	c.launch("layer_max_bwd", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

var _ backend.JumpingKnowledge = (*Backend)(nil)
