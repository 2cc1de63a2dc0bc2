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
// graph: of its target type) (row v for vertex v, flat [N, OutDim]
// float32) on the host: OutputTable read back, for exports.
func (t *Trainer) Outputs() ([]float32, error) {
	tab, err := t.OutputTable()
	if err != nil {
		return nil, err
	}
	defer t.be.Free(tab)
	out := make([]float32, t.OutputRows()*t.head.OutDim())
	t.be.Read(out, tab, 0)
	return out, t.sync()
}

// OutputTable computes the model's output row of every vertex (of a typed
// graph: of its target type) into backend memory, F32 [N, OutDim] with
// row v for vertex v, owned by the caller (Free it on the backend),
// without dropout: with Config.FullEval by layer-wise full-neighbour
// inference, otherwise sampled with the training fanouts and the
// evaluation key, in batches of the evaluation plan's seeds (a tight plan
// grows where a batch needs it), each batch's rows gathered into the
// table on the device. Nothing is read back but a tight plan's counts.
func (t *Trainer) OutputTable() (backend.Buffer, error) {
	if t.cfg.FullEval {
		return t.InferAll()
	}
	n, dim, batch := t.OutputRows(), t.head.OutDim(), t.eval.Batch
	tab, err := t.be.Alloc(backend.F32, max(n*dim, 1))
	if err != nil {
		return nil, err
	}
	rows, err := t.be.Upload(identity(batch))
	if err != nil {
		t.be.Free(tab)
		return nil, err
	}
	defer t.be.Free(rows)
	if err := t.outputRows(tab, rows, n, dim, batch); err != nil {
		t.be.Free(tab)
		return nil, err
	}
	return tab, nil
}

// outputRows fills tab (OutputTable's) batch by batch: row i of a batch's
// output is gathered (rows: I32 [batch], row i = i) into the table's row
// of the batch's i-th vertex.
func (t *Trainer) outputRows(tab, rows backend.Buffer, n, dim, batch int) error {
	seeds := make([]int32, 0, batch)
	steps := (n + batch - 1) / batch
	for s := range steps {
		seeds = rangeIDs(seeds, n, s, batch)
		if err := t.sampleEval(seeds, s); err != nil {
			return err
		}
		p := t.eval
		p.GatherRows(t.in)
		if err := t.gatherFits(p); err != nil {
			return err
		}
		o := t.model.Forward(p.NNBatch(t.in), false, backend.Rand{Seed: t.cfg.Seed, Clock: p.Clock})
		live := backend.Count{Buf: p.NSeeds.Buf, Off: p.NSeeds.Off, Cap: len(seeds)}
		t.be.Gather(o, dim, rows, live, t.be.View(tab, s*batch*dim, len(seeds)*dim))
		t.progress("outputs", s+1, steps)
	}
	t.progress("", 0, 0)
	if err := t.sync(); err != nil {
		return fmt.Errorf("outputs: %w", err)
	}
	return nil
}

// OutputRows is the number of vertices Outputs gives rows of: every
// vertex, or a typed graph's target type's.
func (t *Trainer) OutputRows() int {
	if t.ds.Typed() {
		return int(t.ds.Types[t.ds.Target].Count)
	}
	return int(t.ds.Graph.NumNodes)
}
