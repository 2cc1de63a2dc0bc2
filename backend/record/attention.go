package record

import "github.com/fanout-gnn/fanout/backend"

// The graph attention ops (backend.Attention), run now or recorded like
// every other op.

func (b *Backend) HeadDot(x backend.Buffer, n backend.Count, heads, dim int, a, out backend.Buffer) {
	b.do(func() { b.inner.HeadDot(x, n, heads, dim, a, out) })
}

func (b *Backend) HeadDotBackward(x, dout backend.Buffer, n backend.Count, heads, dim int, a, dx, da backend.Buffer) {
	b.do(func() { b.inner.HeadDotBackward(x, dout, n, heads, dim, a, dx, da) })
}

func (b *Backend) HeadDotBackward2(x, dout1, dout2 backend.Buffer, n1, n2 backend.Count, heads, dim int, a1, a2, dx, da1, da2 backend.Buffer) {
	b.do(func() { b.inner.HeadDotBackward2(x, dout1, dout2, n1, n2, heads, dim, a1, a2, dx, da1, da2) })
}

func (b *Backend) EdgeSoftmax(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, coef backend.Buffer) {
	b.do(func() { b.inner.EdgeSoftmax(blk, el, er, heads, slope, p, r, coef) })
}

func (b *Backend) EdgeSoftmaxBackward(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, dcoef, del, der backend.Buffer) {
	b.do(func() { b.inner.EdgeSoftmaxBackward(blk, el, er, heads, slope, p, r, dcoef, del, der) })
}

func (b *Backend) HeadAggregate(blk *backend.Block, coef, x backend.Buffer, heads, dim int, mean bool, out backend.Buffer) {
	b.do(func() { b.inner.HeadAggregate(blk, coef, x, heads, dim, mean, out) })
}

func (b *Backend) HeadAggregateBackward(blk *backend.Block, coef, x, dout backend.Buffer, heads, dim int, mean bool, dcoef, dx backend.Buffer) {
	b.do(func() { b.inner.HeadAggregateBackward(blk, coef, x, dout, heads, dim, mean, dcoef, dx) })
}
