package profile

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// Memory management forwards untimed, except Write (a copy the device
// performs in stream order) and Fill (an op). Read also settles the marks
// the device has passed (it waits for pending work).

func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) { return b.inner.Alloc(dt, n) }
func (b *Backend) Upload(data any) (backend.Buffer, error)               { return b.inner.Upload(data) }
func (b *Backend) View(buf backend.Buffer, off, n int) backend.Buffer {
	return b.inner.View(buf, off, n)
}
func (b *Backend) Free(buf backend.Buffer)                           { b.inner.Free(buf) }
func (b *Backend) UploadGraph(csr *graph.CSR) (backend.Graph, error) { return b.inner.UploadGraph(csr) }

func (b *Backend) Write(buf backend.Buffer, off int, src any) {
	b.op("Write", func() { b.inner.Write(buf, off, src) })
}

func (b *Backend) Read(dst any, buf backend.Buffer, off int) {
	b.inner.Read(dst, buf, off)
	b.settle()
}

func (b *Backend) Fill(buf backend.Buffer, v float64) {
	b.op("Fill", func() { b.inner.Fill(buf, v) })
}

// Every op below is forwarded between two marks, under its method's name.

func (b *Backend) SampleLayer(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block) {
	b.op("SampleLayer", func() { b.inner.SampleLayer(g, dst, nDst, fanout, r, out) })
}

func (b *Backend) Relabel(g backend.Graph, out *backend.Block) {
	b.op("Relabel", func() { b.inner.Relabel(g, out) })
}

func (b *Backend) Gather(table backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.op("Gather", func() { b.inner.Gather(table, dim, ids, n, out) })
}

func (b *Backend) Linear(x backend.Buffer, n backend.Count, w backend.Buffer, in, out int, y backend.Buffer, accumulate bool) {
	b.op("Linear", func() { b.inner.Linear(x, n, w, in, out, y, accumulate) })
}

func (b *Backend) LinearBackwardData(dy backend.Buffer, n backend.Count, w backend.Buffer, in, out int, dx backend.Buffer, accumulate bool) {
	b.op("LinearBackwardData", func() { b.inner.LinearBackwardData(dy, n, w, in, out, dx, accumulate) })
}

func (b *Backend) LinearBackwardWeight(x, dy backend.Buffer, n backend.Count, in, out int, dw backend.Buffer, accumulate bool) {
	b.op("LinearBackwardWeight", func() { b.inner.LinearBackwardWeight(x, dy, n, in, out, dw, accumulate) })
}

func (b *Backend) Gemm(transA, transB bool, m, n, k int, alpha float32, a, bb backend.Buffer, beta float32, c backend.Buffer) {
	b.op("Gemm", func() { b.inner.Gemm(transA, transB, m, n, k, alpha, a, bb, beta, c) })
}

func (b *Backend) BiasActDropout(x backend.Buffer, n backend.Count, dim int, bias backend.Buffer, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	b.op("BiasActDropout", func() { b.inner.BiasActDropout(x, n, dim, bias, relu, p, r, mask, y) })
}

func (b *Backend) BiasActDropoutBackward(dy, y backend.Buffer, n backend.Count, dim int, relu bool, p float32, mask, dx, dbias backend.Buffer) {
	b.op("BiasActDropoutBackward", func() { b.inner.BiasActDropoutBackward(dy, y, n, dim, relu, p, mask, dx, dbias) })
}

func (b *Backend) SoftmaxCrossEntropy(logits, labels backend.Buffer, n backend.Count, classes int, loss, dlogits backend.Buffer, correct backend.Count) {
	b.op("SoftmaxCrossEntropy", func() { b.inner.SoftmaxCrossEntropy(logits, labels, n, classes, loss, dlogits, correct) })
}

func (b *Backend) Argmax(logits backend.Buffer, n backend.Count, classes int, out backend.Buffer) {
	b.op("Argmax", func() { b.inner.Argmax(logits, n, classes, out) })
}

func (b *Backend) Adam(param, grad, m, v backend.Buffer, t backend.Count, cfg backend.AdamConfig) {
	b.op("Adam", func() { b.inner.Adam(param, grad, m, v, t, cfg) })
}

func (b *Backend) AddCount(c backend.Count, delta int32, unless backend.Buffer) {
	b.op("AddCount", func() { b.inner.AddCount(c, delta, unless) })
}

func (b *Backend) SliceSeeds(perm backend.Buffer, n, batch int, clock, out backend.Buffer, count backend.Count) {
	b.op("SliceSeeds", func() { b.inner.SliceSeeds(perm, n, batch, clock, out, count) })
}

func (b *Backend) FlagOverflow(c backend.Count, clock, flag backend.Buffer) {
	b.op("FlagOverflow", func() { b.inner.FlagOverflow(c, clock, flag) })
}

func (b *Backend) Accumulate(loss backend.Buffer, correct backend.Count, acc, unless backend.Buffer) {
	b.op("Accumulate", func() { b.inner.Accumulate(loss, correct, acc, unless) })
}

func (b *Backend) MeanWeights(blk *backend.Block, edgeW backend.Buffer) {
	b.op("MeanWeights", func() { b.inner.MeanWeights(blk, edgeW) })
}

func (b *Backend) GCNWeights(blk *backend.Block, srcDeg, edgeW, selfW backend.Buffer) {
	b.op("GCNWeights", func() { b.inner.GCNWeights(blk, srcDeg, edgeW, selfW) })
}

func (b *Backend) Aggregate(blk *backend.Block, edgeW, selfW, x backend.Buffer, dim int, out backend.Buffer) {
	b.op("Aggregate", func() { b.inner.Aggregate(blk, edgeW, selfW, x, dim, out) })
}

func (b *Backend) AggregateConcat(blk *backend.Block, edgeW, x backend.Buffer, dim int, out backend.Buffer) {
	b.op("AggregateConcat", func() { b.inner.AggregateConcat(blk, edgeW, x, dim, out) })
}

func (b *Backend) AggregateConcatTable(blk *backend.Block, edgeW, table backend.Buffer, dim int, out backend.Buffer) {
	b.op("AggregateConcatTable", func() { b.inner.AggregateConcatTable(blk, edgeW, table, dim, out) })
}

func (b *Backend) AggregateBackward(blk *backend.Block, edgeW, selfW, dout backend.Buffer, dim int, dx backend.Buffer) {
	b.op("AggregateBackward", func() { b.inner.AggregateBackward(blk, edgeW, selfW, dout, dim, dx) })
}

func (b *Backend) TransposeBlock(blk *backend.Block, t backend.Transposed) {
	b.op("TransposeBlock", func() { b.inner.TransposeBlock(blk, t) })
}

func (b *Backend) AggregateConcatBackward(blk *backend.Block, t backend.Transposed, edgeW, dcat backend.Buffer, dim int, act backend.ActGrad, dx backend.Buffer) {
	b.op("AggregateConcatBackward", func() { b.inner.AggregateConcatBackward(blk, t, edgeW, dcat, dim, act, dx) })
}

func (b *Backend) ScaleShare(x backend.Buffer, n backend.Count, dim int, num, den backend.Count) {
	b.op("ScaleShare", func() { b.inner.ScaleShare(x, n, dim, num, den) })
}

// HostFunc forwards to the inner backend in op order.
func (b *Backend) HostFunc(fn func()) {
	if h, ok := b.inner.(backend.HostFuncs); ok {
		h.HostFunc(fn)
		return
	}
	fn()
}

func (b *Backend) GatherTiered(cache, slot, host backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	b.op("GatherTiered", func() { b.inner.GatherTiered(cache, slot, host, dim, ids, n, out, stats) })
}

// UploadHost forwards to the inner backend (backend.UploadHost).
func (b *Backend) UploadHost(data any) (backend.Buffer, error) {
	return backend.UploadHost(b.inner, data)
}

func (b *Backend) GINWeights(blk *backend.Block, srcDeg, eps, edgeW, selfW backend.Buffer) {
	b.op("GINWeights", func() { b.inner.GINWeights(blk, srcDeg, eps, edgeW, selfW) })
}

func (b *Backend) DotSum(a, bb backend.Buffer, n backend.Count, dim int, out backend.Buffer) {
	b.op("DotSum", func() { b.inner.DotSum(a, bb, n, dim, out) })
}

func (b *Backend) AddRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer, ld, off int) {
	b.op("AddRows", func() { b.inner.AddRows(slot, table, base, dim, ids, n, out, ld, off) })
}

func (b *Backend) ReplaceRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.op("ReplaceRows", func() { b.inner.ReplaceRows(slot, table, base, dim, ids, n, out) })
}

// MaskGraph forwards to the inner backend: it is not an op.
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	return b.inner.MaskGraph(g, skip)
}

func (b *Backend) ScatterAddRows(slot, acc backend.Buffer, dim int, ids backend.Buffer, n backend.Count, src, unless backend.Buffer) {
	b.op("ScatterAddRows", func() { b.inner.ScatterAddRows(slot, acc, dim, ids, n, src, unless) })
}

func (b *Backend) Convert(x, y backend.Buffer) {
	b.op("Convert", func() { b.inner.Convert(x, y) })
}

func (b *Backend) Axpy(alpha float32, x, y backend.Buffer) {
	b.op("Axpy", func() { b.inner.Axpy(alpha, x, y) })
}
