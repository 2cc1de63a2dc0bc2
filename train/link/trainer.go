package link

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// Counts of a link step, in one I32 buffer beside the plan's.
const (
	countPositives = iota // live positive edges (SliceSeeds)
	countPairs            // live pairs, positives·(1+k) (EdgeSeeds)
	countCorrect          // pairs on their label's side (PairLoss)
	countEnds             // live ends, positives·(2+k) (EdgeSeeds)
	countZero             // 0: the ends block has no destinations
	countGlobal           // the step's positives over a data-parallel group
	numCounts
)

// Trainer trains one link predictor on one backend. Its step is backend
// ops only (issueStep); the drivers (Run, RunReplay) write an epoch's
// shuffled edge ids and read the losses.
type Trainer struct {
	be   backend.Backend
	lk   backend.Link
	ds   *dataset.Dataset
	cfg  Config
	in   *train.Inputs
	plan *train.Plan
	m    *nn.Model
	dec  *decoder

	pairs   backend.Buffer // I32 [train edges, 2]
	ends    backend.Buffer // I32 [Batch·(2+k)]: the step's ends (backend.Link's layout)
	rows    backend.Buffer // I32 [Batch·(2+k)]: each end's seed row
	ptr     backend.Buffer // I32 [seeds+1]: GroupRows's rows
	order   backend.Buffer // I32 [Batch·(2+k)]: GroupRows's positions
	endsBlk *backend.Block // the ends as a block without destinations, relabelled into the seeds
	perm    backend.Buffer // I32 [train edges]: the epoch's order
	ids     backend.Buffer // I32 [Batch]: the step's edge ids
	counts  backend.Buffer // I32 [numCounts]
	dist    backend.Buffer // I32 [N+1] cumulative degrees; nil for uniform negatives
	scratch backend.Buffer // I64: ExcludeEdges's table
	h, dh   backend.Buffer // F32 [pairs cap, embed]: products and their gradient
	scores  backend.Buffer // F32 [pairs cap]
	dscores backend.Buffer
	loss    backend.Buffer // F32 [1]
	acc     backend.Buffer // F32 [2]: the epoch's loss and correct sums
	owned   []backend.Buffer

	positives, npairs, correct, nEnds backend.Count

	// A rank of a data-parallel group (group.go): the collective, the
	// step's positives over the whole group (sliced from a stand-in order)
	// and the rank's epoch order's length.
	group            backend.Collective
	global           backend.Count
	standIn, standBy backend.Buffer
	permLen          int
	epoch            int // epochs trained

	sets      [2]*heldOut // the held-out sets as evaluated (evalneg.go)
	best      [][]float32 // the best model's tensors (keepBest)
	sinceBest int         // evaluations since the best one
	resumed   *Summary    // the figures of the epochs before a resume

	// RunDir, when set, is where every epoch's end saves the run (LastFile,
	// BestFile, StateFile), which Resume continues.
	RunDir string

	// OnEpoch, when set, hears each epoch's figures as it ends.
	OnEpoch func(EpochStats)
}

// New builds a trainer for ds's link task (ds.Link) on be, which must have
// the link ops (backend.Link).
func New(be backend.Backend, ds *dataset.Dataset, cfg Config) (*Trainer, error) {
	return NewShared(be, ds, cfg, nil)
}

// NewShared builds one rank's trainer of a data-parallel group (group nil:
// a trainer of its own): every step's cfg.Batch positive edges are split
// evenly over the group's ranks (cfg.Batch must be a multiple of their
// number), each rank's loss and gradient are scaled by its share of the
// step's edges, and the gradients are summed over the group before Adam
// (group.go), so every rank takes the same step.
func NewShared(be backend.Backend, ds *dataset.Dataset, cfg Config, group backend.Collective) (*Trainer, error) {
	return newTrainer(be, ds, cfg, group, nil)
}

// newTrainer is NewShared with the feature rows served by feat, which the
// trainer then owns (freed on any error too); nil uploads the table.
func newTrainer(be backend.Backend, ds *dataset.Dataset, cfg Config, group backend.Collective, feat featstore.Store) (_ *Trainer, err error) {
	defer func() {
		if err != nil && feat != nil {
			feat.Free()
		}
	}()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if group != nil && cfg.Batch%group.Size() != 0 {
		return nil, fmt.Errorf("batch: %d edges do not split evenly over %d devices", cfg.Batch, group.Size())
	}
	if ds.Link == nil {
		return nil, fmt.Errorf("%s has no link task: import or generate it with --link-split", ds.Name)
	}
	lk, err := backend.LinkOf(be)
	if err != nil {
		return nil, err
	}
	t := &Trainer{be: be, lk: lk, ds: ds, cfg: cfg, group: group}
	if err := t.checkEvalSize(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if t.in, err = train.UploadWith(be, ds, nil); err != nil {
		return nil, err
	}
	if feat != nil {
		t.in.Feat, feat = feat, nil // t.in owns it now, and Close frees it
	} else if t.in.Feat, err = featstore.UploadAs(be, ds.FeatureTable(), ds.FeatDim, cfg.Features); err != nil {
		return nil, err
	}
	k, B, dim := cfg.Negatives, t.rankBatch(), cfg.embed()
	endCap := B * (2 + k)
	seeds := int(min(int64(endCap), ds.Graph.NumNodes)) // distinct ends
	caps := conservativeCaps(ds, seeds, cfg.Fanouts)
	if t.plan, err = train.NewPlan(be, seeds, cfg.Fanouts, caps, ds.FeatDim); err != nil {
		return nil, err
	}
	mc := cfg.ModelConfig(ds.FeatDim, dim)
	if t.m, err = nn.NewModel(be, mc, cfg.Seed); err != nil {
		return nil, err
	}
	if err = t.m.Reserve(caps); err != nil {
		return nil, err
	}
	pairCap := B * (1 + k)
	if t.dec, err = newDecoder(be, cfg.Decoder, dim, cfg.decoderWidth(), pairCap, cfg.Seed); err != nil {
		return nil, err
	}
	if t.pairs, err = t.upload(ds.Link.Train); err != nil {
		return nil, err
	}
	if cfg.NegativeDist == DistDegree {
		if t.dist, err = t.upload(cumulativeDegrees(ds)); err != nil {
			return nil, err
		}
	}
	edges := dataset.Pairs(ds.Link.Train)
	for _, a := range []struct {
		dst *backend.Buffer
		dt  backend.DType
		n   int
	}{
		{&t.perm, backend.I32, edges}, {&t.ids, backend.I32, B}, {&t.counts, backend.I32, numCounts},
		{&t.ends, backend.I32, endCap}, {&t.rows, backend.I32, endCap}, {&t.order, backend.I32, endCap},
		{&t.ptr, backend.I32, seeds + 1},
		{&t.scratch, backend.I64, backend.ExcludeScratch(B)},
		{&t.h, backend.F32, pairCap * dim}, {&t.dh, backend.F32, pairCap * dim},
		{&t.scores, backend.F32, pairCap}, {&t.dscores, backend.F32, pairCap},
		{&t.loss, backend.F32, 1}, {&t.acc, backend.F32, 2},
	} {
		if *a.dst, err = t.alloc(a.dt, a.n); err != nil {
			return nil, err
		}
	}
	t.positives = backend.Count{Buf: t.counts, Off: countPositives, Cap: B}
	t.npairs = backend.Count{Buf: t.counts, Off: countPairs, Cap: pairCap}
	t.correct = backend.Count{Buf: t.counts, Off: countCorrect, Cap: pairCap}
	t.nEnds = backend.Count{Buf: t.counts, Off: countEnds, Cap: endCap}
	t.permLen = edges // the rank's share of every epoch's order
	if group != nil {
		t.permLen = train.RankShareLen(edges, t.cfg.Batch, group.Rank(), group.Size())
		if err := t.allocShare(); err != nil {
			return nil, err
		}
	}
	indptr, err := t.alloc(backend.I32, 1)
	if err != nil {
		return nil, err
	}
	t.endsBlk = &backend.Block{
		NumDst: backend.Count{Buf: t.counts, Off: countZero, Cap: 0}, NumEdges: t.nEnds, NumSrc: t.plan.NSeeds,
		Indptr: indptr, Nbrs: t.ends, Indices: t.rows, SrcIDs: t.plan.Seeds,
	}
	if err := t.be.Sync(); err != nil {
		return nil, err
	}
	return t, nil
}

// conservativeCaps is the sampler's conservative envelope for a batch of
// seeds (every batch fits it, so a step never overflows).
func conservativeCaps(ds *dataset.Dataset, seeds int, fanouts []int) []nn.Caps {
	sc := sample.Envelope(ds.Graph, seeds, fanouts)
	caps := make([]nn.Caps, len(sc))
	for i, c := range sc {
		caps[i] = nn.Caps(c)
	}
	return caps
}

// cumulativeDegrees is EdgeSeeds's dist for negatives drawn by degree.
func cumulativeDegrees(ds *dataset.Dataset) []int32 {
	g := ds.Graph
	dist := make([]int32, g.NumNodes+1)
	for v := int64(0); v < g.NumNodes; v++ {
		dist[v+1] = dist[v] + int32(g.Degree(v))
	}
	return dist
}

func (t *Trainer) alloc(dt backend.DType, n int) (backend.Buffer, error) {
	b, err := t.be.Alloc(dt, max(n, 1))
	if err == nil {
		t.owned = append(t.owned, b)
	}
	return b, err
}

func (t *Trainer) upload(data []int32) (backend.Buffer, error) {
	b, err := t.be.Upload(data)
	if err == nil {
		t.owned = append(t.owned, b)
	}
	return b, err
}

// Close releases everything the trainer allocated.
func (t *Trainer) Close() {
	for _, b := range t.owned {
		t.be.Free(b)
	}
	t.owned = nil
	if t.dec != nil {
		t.dec.free()
	}
	if t.m != nil {
		t.m.Free()
	}
	if t.plan != nil {
		t.plan.Free()
	}
	if t.in != nil {
		t.in.Free(t.be)
	}
	t.dec, t.m, t.plan, t.in = nil, nil, nil, nil
}

// adam is the run's optimiser configuration.
func (t *Trainer) adam() backend.AdamConfig {
	return backend.AdamConfig{LR: t.cfg.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: t.cfg.WeightDecay}
}

// issueStep issues one training step, reading the clock from backend
// memory: slice the step's edge ids from the epoch's order, lay out the
// ends and draw the negatives, relabel the ends into distinct seeds,
// sample every hop (taking the batch's edges out), gather, embed, score,
// learn, add the loss to the epoch's sums and advance the clock's step.
func (t *Trainer) issueStep() {
	b, emb := t.issueLoss()
	t.issueGrads(b, emb)
	be, p := t.be, t.plan
	be.AddCount(p.AdamT, 1, nil)
	t.m.Update(p.AdamT, t.adam())
	t.dec.update(p.AdamT, t.adam())
	be.Accumulate(t.loss, t.correct, t.acc, nil)
	be.AddCount(backend.Count{Buf: p.Clock, Off: 1, Cap: 1 << 30}, 1, nil)
}

// issueLoss issues a training step up to its loss (t.loss): the batch,
// the negatives, sampling, the embeddings (returned with the model's
// batch) and the pairs' scores.
func (t *Trainer) issueLoss() (*nn.Batch, backend.Buffer) {
	be, lk, p, c := t.be, t.lk, t.plan, t.cfg
	k, dim := c.Negatives, c.embed()
	be.SliceSeeds(t.perm, t.permLen, t.rankBatch(), p.Clock, t.ids, t.positives)
	lk.EdgeSeeds(t.pairs, t.ids, t.positives, k, int(t.ds.Graph.NumNodes), t.dist,
		backend.Rand{Seed: c.Seed, Stream: negativeStream, Clock: p.Clock}, t.ends, t.nEnds, t.npairs)
	be.Relabel(t.in.Graph, t.endsBlk)
	lk.GroupRows(t.rows, t.nEnds, p.NSeeds, t.ptr, t.order)
	t.sample()
	p.Gather(t.in)
	b := p.NNBatch(t.in)
	emb := t.m.Forward(b, true, backend.Rand{Seed: c.Seed, Clock: p.Clock})
	lk.PairProduct(emb, dim, t.positives, k, t.rows, t.h)
	t.dec.forward(t.h, t.npairs, t.scores)
	lk.PairLoss(t.scores, t.positives, k, t.loss, t.dscores, t.correct)
	t.scaleShare()
	return b, emb
}

// issueGrads issues the backward pass of issueLoss's step: every
// parameter's gradient (model and decoder).
func (t *Trainer) issueGrads(b *nn.Batch, emb backend.Buffer) {
	c := t.cfg
	t.dec.backward(t.h, t.npairs, t.dscores, t.dh)
	t.lk.PairProductBackward(emb, t.dh, c.embed(), t.positives, c.Negatives, t.rows, t.ptr, t.order, t.plan.NSeeds, t.m.OutputGrad())
	t.m.Backward(b)
	t.reduceGrads()
}

// sample samples every hop from the step's seeds as Plan.Sample does,
// removing the batch's edges (Config.Exclude) from each hop before it is
// relabelled.
func (t *Trainer) sample() {
	p, g := t.plan, t.in.Graph
	L := len(p.Fanouts)
	dst := p.Seeds
	for h := 0; h < L; h++ {
		b := p.Blocks[L-1-h]
		r := backend.Rand{Seed: t.cfg.Seed, Stream: uint32(h), Clock: p.Clock}
		t.be.SampleLayer(g, dst, b.NumDst, p.Fanouts[h], r, b)
		if t.cfg.Exclude != ExcludeNone {
			t.lk.ExcludeEdges(b, t.ends, t.positives, t.cfg.Exclude == ExcludeReverse, t.scratch)
		}
		t.be.Relabel(g, b)
		dst = b.SrcIDs
	}
}
