package cuda

import "github.com/fanout-gnn/fanout/backend"

// LayerMax folds layer k's output into the running maximum
// (kernels/jk.cu).
func (b *Backend) LayerMax(x backend.Buffer, n backend.Count, dim, k int, first bool, y, arg backend.Buffer) {
	c, ck := b.checkLayerMax(x, n, dim, k, first, y, arg)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchLayerMax(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// LayerMaxBackward writes layer k's share of the maximum's gradient
// (kernels/jk.cu).
func (b *Backend) LayerMaxBackward(dy, arg backend.Buffer, n backend.Count, dim, k int, accumulate bool, dx backend.Buffer) {
	c, ck := b.checkLayerMaxBackward(dy, arg, n, dim, k, accumulate, dx)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchLayerMaxBwd(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

var _ backend.JumpingKnowledge = (*Backend)(nil)
