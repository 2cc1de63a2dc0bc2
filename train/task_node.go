package train

import (
	"context"
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
)

// NodeTask is node classification: a step's items are training vertices,
// which are its seeds; the model's output is the classes' logits, its loss
// softmax cross-entropy against the vertices' labels, and an evaluation
// reports accuracy and loss.
type NodeTask struct{}

// Name is TaskNode.
func (NodeTask) Name() string { return TaskNode }

// Bind checks that t's dataset has classes and non-empty splits.
func (NodeTask) Bind(t *Trainer) (Head, error) {
	ds := t.ds
	if ds.NumClasses < 2 {
		return nil, fmt.Errorf("dataset %s: %d classes, need at least 2", ds.Name, ds.NumClasses)
	}
	for _, sp := range []struct {
		name string
		ids  []int64
	}{{"training", ds.Train}, {"validation", ds.Valid}, {"test", ds.Test}} {
		if len(sp.ids) == 0 {
			return nil, fmt.Errorf("dataset %s: the %s split is empty", ds.Name, sp.name)
		}
	}
	return &nodeHead{t: t}, nil
}

// nodeHead is one trainer's node classification.
type nodeHead struct{ t *Trainer }

func (h *nodeHead) OutDim() int             { return h.t.ds.NumClasses }
func (h *nodeHead) Items() []int64          { return h.t.ds.Train }
func (h *nodeHead) ItemCount() int          { return len(h.t.ds.Train) }
func (h *nodeHead) SeedCap(items int) int   { return items }
func (h *nodeHead) Outcomes(items int) int  { return items }
func (h *nodeHead) Params() []*nn.Param     { return nil }
func (h *nodeHead) Primary() string         { return MetricAcc }
func (h *nodeHead) MetricKeys() []string    { return []string{MetricAcc, MetricLoss} }
func (h *nodeHead) Free()                   {}
func (h *nodeHead) UninformedLoss() float64 { return math.Log(float64(max(h.t.ds.NumClasses, 2))) }

// NewBatch gives the plan the seeds' labels.
func (h *nodeHead) NewBatch(p *Plan) (Batch, error) {
	var err error
	if p.Labels, err = p.Alloc(backend.I32, p.Batch); err != nil {
		return nil, err
	}
	return &nodeBatch{m: h.t.model}, nil
}

// Evaluate is the accuracy and loss of the split's vertices
// (Trainer.Evaluate).
func (h *nodeHead) Evaluate(_ context.Context, s Split) (Metrics, error) {
	ids := h.t.ds.Valid
	if s == Test {
		ids = h.t.ds.Test
	}
	acc, loss, err := h.t.Evaluate(ids)
	return Metrics{MetricAcc: acc, MetricLoss: loss}, err
}

// nodeBatch is a node classification step: the seeds are the items, the
// loss the model's softmax cross-entropy (which writes the logits'
// gradient itself).
type nodeBatch struct{ m *nn.Model }

func (b *nodeBatch) Form()                              {}
func (b *nodeBatch) Hop(int, HopSample) bool            { return false }
func (b *nodeBatch) Backward(*nn.Batch, backend.Buffer) {}
func (b *nodeBatch) Free()                              {}

func (b *nodeBatch) Loss(nb *nn.Batch, out backend.Buffer) (backend.Buffer, backend.Count) {
	return b.m.Loss(nb, out)
}
