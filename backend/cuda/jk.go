package cuda

import "github.com/fanout-gnn/fanout/backend"

// LayerMax folds layer k's output into the running maximum
// (kernels/jk.cu).
func (b *Backend) LayerMax(x backend.Buffer, n backend.Count, dim, k int, first bool, y, arg backend.Buffer) {
	c := b.begin("LayerMax")
	defer c.end()
	ck := c.checkLayerMax(x, n, dim, k, first, y, arg)
	if !c.ok {
		return
	}
	c.launchLayerMax(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// LayerMaxBackward writes layer k's share of the maximum's gradient
// (kernels/jk.cu).
func (b *Backend) LayerMaxBackward(dy, arg backend.Buffer, n backend.Count, dim, k int, accumulate bool, dx backend.Buffer) {
	c := b.begin("LayerMaxBackward")
	defer c.end()
	ck := c.checkLayerMaxBackward(dy, arg, n, dim, k, accumulate, dx)
	if !c.ok {
		return
	}
	c.launchLayerMaxBwd(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

var _ backend.JumpingKnowledge = (*Backend)(nil)
