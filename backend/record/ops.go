package record

import "github.com/fanout-gnn/fanout/backend"

// Every op below runs on the inner backend now, or is recorded during a
// capture with its arguments as given (*Block pointers included).

func (b *Backend) SampleLayer(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block) {
	b.do(func() { b.inner.SampleLayer(g, dst, nDst, fanout, r, out) })
}

func (b *Backend) Relabel(g backend.Graph, out *backend.Block) {
	b.do(func() { b.inner.Relabel(g, out) })
}

func (b *Backend) Gather(table backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.do(func() { b.inner.Gather(table, dim, ids, n, out) })
}

func (b *Backend) Linear(x backend.Buffer, n backend.Count, w backend.Buffer, in, out int, y backend.Buffer, accumulate bool) {
	b.do(func() { b.inner.Linear(x, n, w, in, out, y, accumulate) })
}

func (b *Backend) LinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, in, out int, dx backend.Buffer, accumulate bool) {
	b.do(func() { b.inner.LinearBackwardData(dy, n, w, in, out, dx, accumulate) })
}

func (b *Backend) LinearBackwardWeight(x, dy backend.Buffer, n backend.Count, in, out int, dw backend.Buffer, accumulate bool) {
	b.do(func() { b.inner.LinearBackwardWeight(x, dy, n, in, out, dw, accumulate) })
}

func (b *Backend) Gemm(transA, transB bool, m, n, k int, alpha float32, a, bb backend.Buffer, beta float32, c backend.Buffer) {
	b.do(func() { b.inner.Gemm(transA, transB, m, n, k, alpha, a, bb, beta, c) })
}

func (b *Backend) BiasActDropout(x backend.Buffer, n backend.Count, dim int, bias backend.Buffer, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	b.do(func() { b.inner.BiasActDropout(x, n, dim, bias, relu, p, r, mask, y) })
}

func (b *Backend) BiasActDropoutBackward(dy, y backend.Buffer, n backend.Count, dim int, relu bool, p float32, mask, dx, dbias backend.Buffer) {
	b.do(func() { b.inner.BiasActDropoutBackward(dy, y, n, dim, relu, p, mask, dx, dbias) })
}

func (b *Backend) SoftmaxCrossEntropy(logits, labels backend.Buffer, n backend.Count, classes int, loss, dlogits backend.Buffer, correct backend.Count) {
	b.do(func() { b.inner.SoftmaxCrossEntropy(logits, labels, n, classes, loss, dlogits, correct) })
}

func (b *Backend) Argmax(logits backend.Buffer, n backend.Count, classes int, out backend.Buffer) {
	b.do(func() { b.inner.Argmax(logits, n, classes, out) })
}

func (b *Backend) Adam(param, grad, m, v backend.Buffer, t backend.Count, cfg backend.AdamConfig) {
	b.do(func() { b.inner.Adam(param, grad, m, v, t, cfg) })
}

func (b *Backend) AddCount(c backend.Count, delta int32, unless backend.Buffer) {
	b.do(func() { b.inner.AddCount(c, delta, unless) })
}

func (b *Backend) SliceSeeds(perm backend.Buffer, n, batch int, clock, out backend.Buffer, count backend.Count) {
	b.do(func() { b.inner.SliceSeeds(perm, n, batch, clock, out, count) })
}

func (b *Backend) FlagOverflow(c backend.Count, clock, flag backend.Buffer) {
	b.do(func() { b.inner.FlagOverflow(c, clock, flag) })
}

func (b *Backend) Accumulate(loss backend.Buffer, correct backend.Count, acc, unless backend.Buffer) {
	b.do(func() { b.inner.Accumulate(loss, correct, acc, unless) })
}

func (b *Backend) MeanWeights(blk *backend.Block, edgeW backend.Buffer) {
	b.do(func() { b.inner.MeanWeights(blk, edgeW) })
}

func (b *Backend) GCNWeights(blk *backend.Block, srcDeg, edgeW, selfW backend.Buffer) {
	b.do(func() { b.inner.GCNWeights(blk, srcDeg, edgeW, selfW) })
}

func (b *Backend) Aggregate(blk *backend.Block, edgeW, selfW, x backend.Buffer, dim int, out backend.Buffer) {
	b.do(func() { b.inner.Aggregate(blk, edgeW, selfW, x, dim, out) })
}

func (b *Backend) AggregateConcat(blk *backend.Block, edgeW, x backend.Buffer, dim int, out backend.Buffer) {
	b.do(func() { b.inner.AggregateConcat(blk, edgeW, x, dim, out) })
}

func (b *Backend) AggregateConcatTable(blk *backend.Block, edgeW, table backend.Buffer, dim int, out backend.Buffer) {
	b.do(func() { b.inner.AggregateConcatTable(blk, edgeW, table, dim, out) })
}

func (b *Backend) AggregateBackward(blk *backend.Block, edgeW, selfW, dout backend.Buffer, dim int, dx backend.Buffer) {
	b.do(func() { b.inner.AggregateBackward(blk, edgeW, selfW, dout, dim, dx) })
}

func (b *Backend) TransposeBlock(blk *backend.Block, t backend.Transposed) {
	b.do(func() { b.inner.TransposeBlock(blk, t) })
}

func (b *Backend) AggregateConcatBackward(blk *backend.Block, t backend.Transposed, edgeW, dcat backend.Buffer, dim int, act backend.ActGrad, dx backend.Buffer) {
	b.do(func() { b.inner.AggregateConcatBackward(blk, t, edgeW, dcat, dim, act, dx) })
}

func (b *Backend) ScaleShare(x backend.Buffer, n backend.Count, dim int, num, den backend.Count) {
	b.do(func() { b.inner.ScaleShare(x, n, dim, num, den) })
}

// HostFunc runs fn in op order on the inner backend: recorded during a
// capture (and run at every replay), otherwise run now.
func (b *Backend) HostFunc(fn func()) {
	b.do(func() {
		if h, ok := b.inner.(backend.HostFuncs); ok {
			h.HostFunc(fn)
			return
		}
		fn()
	})
}

func (b *Backend) GatherTiered(cache, slot, host backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	b.do(func() { b.inner.GatherTiered(cache, slot, host, dim, ids, n, out, stats) })
}

func (b *Backend) GINWeights(blk *backend.Block, srcDeg, eps, edgeW, selfW backend.Buffer) {
	b.do(func() { b.inner.GINWeights(blk, srcDeg, eps, edgeW, selfW) })
}

func (b *Backend) DotSum(a, bb backend.Buffer, n backend.Count, dim int, out backend.Buffer) {
	b.do(func() { b.inner.DotSum(a, bb, n, dim, out) })
}

func (b *Backend) AddRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer, ld, off int) {
	b.do(func() { b.inner.AddRows(slot, table, base, dim, ids, n, out, ld, off) })
}

func (b *Backend) ReplaceRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.do(func() { b.inner.ReplaceRows(slot, table, base, dim, ids, n, out) })
}

// MaskGraph makes the view on the inner backend at once: it is not an op.
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	return b.inner.MaskGraph(g, skip)
}

func (b *Backend) ScatterAddRows(slot, acc backend.Buffer, dim int, ids backend.Buffer, n backend.Count, src, unless backend.Buffer) {
	b.do(func() { b.inner.ScatterAddRows(slot, acc, dim, ids, n, src, unless) })
}

func (b *Backend) Convert(x, y backend.Buffer) {
	b.do(func() { b.inner.Convert(x, y) })
}

func (b *Backend) Axpy(alpha float32, x, y backend.Buffer) {
	b.do(func() { b.inner.Axpy(alpha, x, y) })
}
