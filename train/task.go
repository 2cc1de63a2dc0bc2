package train

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
)

// Task is what a run learns: node classification (NodeTask, the default)
// or another kind (package train/link's link prediction). A Task is a
// value without backend state; Bind makes, for one trainer, the Head that
// holds the task's buffers and does its part of every step. The trainer,
// its drivers (eager, replay) and the modes around them (hybrid, several
// devices, processes) are the same for every task.
type Task interface {
	// Name is the task's name (Config.Task).
	Name() string
	// Bind makes the task's part of trainer t. It runs before t's model
	// is built (Head.OutDim sizes it) and may read t's dataset, settings
	// and backend; it must not keep memory beyond what Head.Free frees.
	Bind(t *Trainer) (Head, error)
}

// Head is one trainer's task: what differs between tasks in forming a
// batch, its loss, its evaluation and its saved state.
type Head interface {
	// OutDim is the width of the model's output (classes, or the link
	// task's embedding width).
	OutDim() int
	// Items are the training items an epoch shuffles and takes Config.Batch
	// of per step: for node classification the training vertices; nil
	// means the ids 0..ItemCount()-1 (the link task's training edges).
	Items() []int64
	// ItemCount is the number of training items.
	ItemCount() int
	// SeedCap is the most seed vertices a step of at most items items has.
	SeedCap(items int) int
	// Outcomes is the number of predictions that items items make: the
	// denominator of the training accuracy (a link step's positives and
	// negatives).
	Outcomes(items int) int
	// UninformedLoss is the loss of a model that knows nothing (ln of the
	// number of classes; ln 2 for a binary score), which the trainer's
	// divergence checks compare an epoch's loss with.
	UninformedLoss() float64
	// NewBatch makes the task's buffers of one plan (each plan of a
	// driver has its own, as the replay driver samples the next step
	// into one plan while the other computes).
	NewBatch(p *Plan) (Batch, error)
	// Params are the task's learnt tensors beyond the model's (the link
	// task's decoder), trained, all-reduced and saved with them.
	Params() []*nn.Param
	// Evaluate scores the current model on a held-out split; long work
	// stops when ctx is cancelled.
	Evaluate(ctx context.Context, s Split) (Metrics, error)
	// Primary is the key of the Metrics figure that picks the best model
	// (higher is better).
	Primary() string
	// MetricKeys are the keys Evaluate reports, in the order messages
	// print them.
	MetricKeys() []string
	// Free releases the head's buffers.
	Free()
}

// Batch is the task's part of one plan's step. Every method issues
// backend ops that read their sizes from backend memory, so the replay
// driver captures them.
type Batch interface {
	// Form writes the step's seed vertices (Plan.Seeds, Plan.NSeeds) from
	// its items (Plan.Items, Plan.NItems): nothing where the items are the
	// seeds (node classification, whose Items are its Seeds); a link
	// step's edges and negatives, their ends made distinct.
	Form()
	// Hop samples hop h (0: from the seeds) of a training step itself and
	// reports true, or reports false and the plan samples it with
	// SampleLayer (node classification). The link task samples every hop
	// without the batch's own edges (the sampling op SampleExcluding).
	Hop(h int, s HopSample) bool
	// Loss issues the loss of the model's output out on the batch: the
	// mean loss (F32 [1]) and the correct predictions (a count), both in
	// backend memory, and the gradient of the loss with respect to out,
	// written into the model's output gradient (nn.Model.OutputGrad) by the
	// time Backward returns, and of the task's own parameters.
	Loss(b *nn.Batch, out backend.Buffer) (backend.Buffer, backend.Count)
	// Backward issues what the output's gradient needs after Loss and
	// before the model's backward pass.
	Backward(b *nn.Batch, out backend.Buffer)
	// Free releases the batch's buffers.
	Free()
}

// HopSample is one hop of a step's sampling: SampleLayer's arguments.
// Out.NumDst is the destinations' count.
type HopSample struct {
	Graph  backend.Graph
	Dst    backend.Buffer // I32 [Out.NumDst.Cap]: the previous hop's sources (hop 0: the seeds)
	Fanout int
	Rand   backend.Rand
	Out    *backend.Block
}

// Split is a held-out set of the task's items.
type Split int

// The held-out splits.
const (
	Valid Split = iota
	Test
)

func (s Split) String() string {
	if s == Test {
		return "test"
	}
	return "valid"
}

// Metrics are an evaluation's figures by name ("acc", "loss"; "auc", "ap",
// "mrr", "hits@20", ...): what a task's Evaluate reports.
type Metrics map[string]float64

// Figures of node classification's Metrics.
const (
	MetricAcc  = "acc"
	MetricLoss = "loss"
)

// Text renders m's figures named in keys, in that order ("accuracy
// 0.8123, loss 0.5512"), then any others m holds, sorted; each by its
// MetricName.
func (m Metrics) Text(keys []string) string {
	var parts []string
	seen := map[string]bool{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.4f", MetricName(k), v))
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, fmt.Sprintf("%s %.4f", MetricName(k), m[k]))
	}
	return strings.Join(parts, ", ")
}

// MetricName is how messages name a Metrics key: "accuracy" for acc,
// "ROC-AUC" for auc, "AP", "MRR", "Hits@K" for hits@K; others as they are.
func MetricName(key string) string {
	switch key {
	case MetricAcc:
		return "accuracy"
	case "auc":
		return "ROC-AUC"
	case "ap", "mrr":
		return strings.ToUpper(key)
	}
	if at, ok := strings.CutPrefix(key, "hits@"); ok {
		return "Hits@" + at
	}
	return key
}
