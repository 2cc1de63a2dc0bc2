package link

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/train"
)

// ringData is a symmetric graph of n vertices (a ring, chords and a hub
// joined to every tenth vertex) with 8 random features each, its edges
// split 0.8/0.1/0.1 with 2 fixed negatives per held-out edge.
func ringData(t testing.TB, n int32) *dataset.Dataset {
	t.Helper()
	var src, dst []int32
	for i := int32(0); i < n; i++ {
		src = append(src, i, i)
		dst = append(dst, (i+1)%n, (i*7+3)%n)
		if i%10 == 0 {
			src, dst = append(src, 0), append(dst, i)
		}
	}
	g, err := graph.FromEdges(int64(n), src, dst, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	const dim = 8
	feat := make([]float32, int(n)*dim)
	rng.Key{Seed: 3}.FillUniform(feat, dim, -1, 1)
	ds := &dataset.Dataset{Name: "ring", Graph: g, Symmetric: true, Features: feat, FeatDim: dim,
		Labels: make([]int32, n), NumClasses: 1, Train: []int64{0}}
	if err := linksplit.Apply(ds, linksplit.Options{Fractions: linksplit.Fractions{Train: 0.8, Valid: 0.1, Test: 0.1}, Negatives: 2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	return ds
}

// ringConfig exercises every part of the step: GraphSAGE with dropout,
// two negatives by degree, the MLP decoder, reverses excluded.
func ringConfig() train.Config {
	c := train.Defaults()
	c.Task, c.Link = train.TaskLink, train.LinkDefaults()
	c.Model, c.Layers, c.Hidden, c.Link.Embed = "sage", 2, 16, 8
	c.Fanouts, c.Batch, c.Epochs, c.LR, c.Dropout = []int{4, 3}, 64, 2, 0.01, 0.3
	c.Link.Negatives, c.Link.NegativeDist, c.Link.Decoder, c.Link.DecoderWidth = 2, train.DistDegree, train.DecoderMLP, 6
	return c
}

// newTrainer is a link trainer of cfg on ds (closed at the end of the
// test).
func newTrainer(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config, opt train.Options) *train.Trainer {
	t.Helper()
	opt.Task = Task{}
	tr, err := train.New(be, ds, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

// result is what a run gave: its summary, every epoch's figures, every
// step's loss and the learnt tensors at its end.
type result struct {
	sum    *train.Summary
	epochs []train.EpochStats
	steps  []float32
	params [][]float32
}

// trainLink trains cfg on ds with the driver of mode (a capturing one
// needs a backend that captures: record.New) and returns what it gave.
func trainLink(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config, mode train.Mode, opt train.Options) result {
	t.Helper()
	return trainThen(t, be, ds, cfg, mode, opt, nil)
}

// trainThen is trainLink that hands the trainer to then (when set) before
// closing it.
func trainThen(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config, mode train.Mode, opt train.Options, then func(*train.Trainer)) result {
	t.Helper()
	var r result
	opt.Mode, opt.Task = mode, Task{}
	opt.OnEpoch = func(st train.EpochStats) { r.epochs = append(r.epochs, st) }
	opt.OnStep = func(_, _ int, l float32) { r.steps = append(r.steps, l) }
	tr, err := train.New(be, ds, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close() // now: a run directory stays locked until then
	drive(t, tr, mode, &r)
	if then != nil {
		then(tr)
	}
	return r
}

// drive trains tr with the driver of mode into r (whose epochs tr's
// Options.OnEpoch gathers).
func drive(t *testing.T, tr *train.Trainer, mode train.Mode, r *result) {
	t.Helper()
	var err error
	if mode.Captures() {
		r.sum, _, err = tr.RunReplay(t.Context(), train.ReplayOptions{})
	} else {
		r.sum, err = tr.Run(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	r.params = params(t, tr)
}

// params reads every learnt tensor of a trainer (model, then decoder).
func params(t *testing.T, tr *train.Trainer) [][]float32 {
	t.Helper()
	be := tr.Backend()
	var out [][]float32
	for _, p := range tr.Params() {
		s := make([]float32, p.Size())
		be.Read(s, p.W, 0)
		out = append(out, s)
	}
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return out
}

// bestEmbeddings trains cfg on ds with the eager driver on a CPU backend
// and returns the trainer (closed at the end of the test), its summary
// and every vertex's embedding from its best model.
func bestEmbeddings(t *testing.T, ds *dataset.Dataset, cfg train.Config) (*train.Trainer, result, []float32) {
	t.Helper()
	var r result
	opt := train.Options{KeepBest: true, OnEpoch: func(st train.EpochStats) { r.epochs = append(r.epochs, st) }}
	tr := newTrainer(t, cpu.New(2), ds, cfg, opt)
	drive(t, tr, train.Eager, &r)
	if err := tr.UseBest(); err != nil {
		t.Fatal(err)
	}
	emb, _, err := Embeddings(tr)
	if err != nil {
		t.Fatal(err)
	}
	return tr, r, emb
}

// stepPlan issues the items of a step of tr's training plan (the epoch's
// first edges, in order) up to its sampled blocks, and returns the plan.
func stepPlan(t *testing.T, tr *train.Trainer, step int) *train.Plan {
	t.Helper()
	p := tr.Plan()
	items := make([]int32, tr.StepItems())
	for i := range items {
		items[i] = int32(step*len(items) + i)
	}
	p.SetItems(items, len(items), 0, step)
	p.SampleTrain(tr.Inputs(), tr.Config().Seed)
	p.Gather(tr.Inputs())
	return p
}

// stepLoss issues the forward pass and the loss of the step on plan p and
// returns the model's batch, its output and the loss buffer.
func stepLoss(tr *train.Trainer, p *train.Plan) (*nn.Batch, backend.Buffer, backend.Buffer) {
	nb := p.NNBatch(tr.Inputs())
	out := tr.Model().Forward(nb, true, backend.Rand{Seed: tr.Config().Seed, Clock: p.Clock})
	loss, _ := p.Task.Loss(nb, out)
	return nb, out, loss
}
