package link

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// Counts of a link step, in one I32 buffer of each plan.
const (
	countPositives = iota // live positive edges (the plan's items)
	countPairs            // live pairs, positives·(1+k) (EdgeSeeds)
	countCorrect          // pairs on their label's side (PairLoss)
	countEnds             // live ends, LinkEnds(positives, k, layout) (EdgeSeeds)
	countZero             // 0: the ends block has no destinations
	numCounts
)

// batch is a plan's link step: the step's edge ids (the plan's items),
// their ends with the drawn negatives (backend.Link's layout), each end's
// row among the distinct seeds, and the ends grouped by row.
type batch struct {
	h       *head
	p       *train.Plan
	ends    backend.Buffer // I32 [LinkEnds(B, k, layout)]
	rows    backend.Buffer // I32 [LinkEnds(B, k, layout)]: each end's seed row
	ptr     backend.Buffer // I32 [seeds+1]: GroupRows's rows
	order   backend.Buffer // I32 [LinkEnds(B, k, layout)]: GroupRows's positions
	excl    backend.Buffer // I64 [ExclusionSize(B)]: the positives kept out of the hops (BuildExclusion)
	endsBlk *backend.Block // the ends as a block without destinations, relabelled into the seeds

	positives, npairs, correct, nEnds backend.Count
}

// NewBatch gives plan p the link step's buffers, its items among them:
// the step's edge ids (I32 [B]) and their live count.
func (h *head) NewBatch(p *train.Plan) (train.Batch, error) {
	B, k := h.batch, h.k
	endCap := backend.LinkEnds(B, k, h.layout)
	b := &batch{h: h, p: p}
	var ids, counts, indptr backend.Buffer
	var err error
	for _, a := range []struct {
		dst *backend.Buffer
		dt  backend.DType
		n   int
	}{
		{&ids, backend.I32, B}, {&counts, backend.I32, numCounts}, {&indptr, backend.I32, 1},
		{&b.ends, backend.I32, endCap}, {&b.rows, backend.I32, endCap}, {&b.order, backend.I32, endCap},
		{&b.ptr, backend.I32, p.Batch + 1}, {&b.excl, backend.I64, backend.ExclusionSize(B)},
	} {
		if *a.dst, err = p.Alloc(a.dt, a.n); err != nil {
			return nil, err
		}
	}
	h.be.Fill(counts, 0)
	pairCap := B * (1 + k)
	b.positives = backend.Count{Buf: counts, Off: countPositives, Cap: B}
	b.npairs = backend.Count{Buf: counts, Off: countPairs, Cap: pairCap}
	b.correct = backend.Count{Buf: counts, Off: countCorrect, Cap: pairCap}
	b.nEnds = backend.Count{Buf: counts, Off: countEnds, Cap: endCap}
	b.endsBlk = &backend.Block{
		NumDst: backend.Count{Buf: counts, Off: countZero, Cap: 0}, NumEdges: b.nEnds, NumSrc: p.NSeeds,
		Indptr: indptr, Nbrs: b.ends, Indices: b.rows, SrcIDs: p.Seeds,
	}
	p.Items, p.NItems = ids, b.positives
	return b, nil
}

// Form lays out the step's ends and draws the negatives, each positive's
// own or the step's shared ones (EdgeSeeds; in batch none are drawn),
// relabels the ends into distinct seeds and groups them by seed row; and,
// unless --exclude none, builds the step's exclusion of its positive
// edges (and, with reverse, their reverses) once for every hop
// (BuildExclusion).
func (b *batch) Form() {
	h, p := b.h, b.p
	g := h.t.Inputs().Graph
	h.lk.EdgeSeeds(h.pairs, p.Items, b.positives, h.k, h.layout, int(h.ds.Graph.NumNodes), h.dist,
		backend.Rand{Seed: h.seed, Stream: negativeStream, Clock: p.Clock}, b.ends, b.nEnds, b.npairs)
	h.be.Relabel(g, b.endsBlk)
	h.lk.GroupRows(b.rows, b.nEnds, p.NSeeds, b.ptr, b.order)
	if ex := h.cfg.Exclude; ex != train.ExcludeNone {
		h.be.BuildExclusion(g, b.ends, b.positives, ex == train.ExcludeReverse, b.excl)
	}
}

// Hop samples a training step's hop without the batch's positive edges
// (SampleExcluding through Form's exclusion: each destination samples its
// row with them removed), or leaves it to SampleLayer with --exclude none.
func (b *batch) Hop(_ int, s train.HopSample) bool {
	if b.h.cfg.Exclude == train.ExcludeNone {
		return false
	}
	b.h.be.SampleExcluding(s.Graph, s.Dst, s.Out.NumDst, s.Fanout, s.Rand, s.Out, b.positives, b.excl)
	return true
}

// Loss scores the pairs from the embeddings out (their element-wise
// products through the decoder) and issues their binary cross-entropy; a
// rank of a group scales its loss and gradient to its share of the step's
// positives.
func (b *batch) Loss(_ *nn.Batch, out backend.Buffer) (backend.Buffer, backend.Count) {
	h, p := b.h, b.p
	h.lk.PairProduct(out, h.dim, b.positives, h.k, h.layout, b.rows, h.prod)
	h.dec.forward(h.prod, b.npairs, h.scores, h.dec.z1)
	h.lk.PairLoss(h.scores, b.positives, h.k, h.loss, h.dscores, b.correct)
	if p.Shared {
		h.be.ScaleShare(h.dscores, b.npairs, 1, b.positives, p.Global)
		h.be.ScaleShare(h.loss, p.One, 1, b.positives, p.Global)
	}
	return h.loss, b.correct
}

// Backward takes the scores' gradient through the decoder (its
// parameters' gradients too) and the products into the model's output
// gradient.
func (b *batch) Backward(_ *nn.Batch, out backend.Buffer) {
	h, p := b.h, b.p
	h.dec.backward(h.prod, b.npairs, h.dscores, h.dprod)
	h.lk.PairProductBackward(out, h.dprod, h.dim, b.positives, h.k, h.layout, b.rows, b.ptr, b.order, p.NSeeds, h.t.Model().OutputGrad())
}

// Free releases nothing of its own: the plan owns the batch's buffers.
func (b *batch) Free() {}
