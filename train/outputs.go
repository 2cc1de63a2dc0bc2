package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Plan is the training plan: the buffers of one step, which tools and
// tests that issue a step themselves use (nil before a capturing driver
// provisions it).
func (t *Trainer) Plan() *Plan { return t.plan }

// StepItems is the number of items a step of this rank takes at most:
// Config.Batch divided by the group's size.
func (t *Trainer) StepItems() int { return t.batch() }

// Outputs computes the model's output row of every vertex (of a typed
// graph: of its target type) (row v for
// vertex v, flat [N, OutDim] float32), without dropout: with
// Config.FullEval by layer-wise full-neighbour inference, otherwise
// sampled with the training fanouts and the evaluation key, in batches of
// the evaluation plan's seeds (a tight plan grows where a batch needs it).
func (t *Trainer) Outputs() ([]float32, error) {
	n, dim := t.OutputRows(), t.head.OutDim()
	out := make([]float32, n*dim)
	if t.cfg.FullEval {
		tab, err := t.InferAll()
		if err != nil {
			return nil, err
		}
		defer t.be.Free(tab)
		t.be.Read(out, tab, 0)
		return out, t.sync()
	}
	batch := t.eval.Batch
	seeds := make([]int32, 0, batch)
	for s := 0; s*batch < n; s++ {
		seeds = rangeIDs(seeds, n, s, batch)
		if err := t.sampleEval(seeds, s); err != nil {
			return nil, err
		}
		p := t.eval
		p.GatherRows(t.in)
		if err := t.gatherFits(p); err != nil {
			return nil, err
		}
		o := t.model.Forward(p.NNBatch(t.in), false, backend.Rand{Seed: t.cfg.Seed, Clock: p.Clock})
		t.be.Read(out[s*batch*dim:(s*batch+len(seeds))*dim], o, 0)
		if err := t.sync(); err != nil {
			return nil, fmt.Errorf("outputs batch %d: %w", s, err)
		}
		t.progress("outputs", s+1, (n+batch-1)/batch)
	}
	t.progress("", 0, 0)
	return out, nil
}

// OutputRows is the number of vertices Outputs gives rows of: every
// vertex, or a typed graph's target type's.
func (t *Trainer) OutputRows() int {
	if t.ds.Typed() {
		return int(t.ds.Types[t.ds.Target].Count)
	}
	return int(t.ds.Graph.NumNodes)
}
