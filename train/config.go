package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// Tasks a run learns (Config.Task).
const (
	TaskNode = "node" // vertex classification (the default; "" too)
	TaskLink = "link" // link prediction (package train/link)
)

// Config is one training run's configuration, as a checkpoint records it:
// the model, sampling and optimiser settings every task shares, and the
// task's own (Link). The zero value is not valid: start from Defaults and
// override. Validate names a wrong setting by its key (the JSON name of the
// field); the command line maps keys to its flags.
type Config struct {
	// Task is what is learnt: TaskNode (or "") or TaskLink.
	Task        string  `json:"task,omitempty"`
	Model       string  `json:"model"`        // "sage", "gcn", "gin", "gat"; typed graphs' "rsage", "rgcn", "rgat"
	Layers      int     `json:"layers"`       // number of GNN layers
	Hidden      int     `json:"hidden"`       // hidden width
	Fanouts     []int   `json:"fanouts"`      // per hop from the seeds; -1 = all, 0 = none
	Batch       int     `json:"batch"`        // items per step: seed vertices, or positive edges
	Epochs      int     `json:"epochs"`       // passes over the training items
	LR          float32 `json:"lr"`           // Adam learning rate
	WeightDecay float32 `json:"weight_decay"` // L2 added to gradients
	// LRSchedule is the learning rate's schedule over the epochs:
	// "constant" (or empty) or "cosine" (schedule.go).
	LRSchedule string  `json:"lr_schedule,omitempty"`
	Dropout    float32 `json:"dropout"`           // dropout probability on hidden layers
	InDropout  float32 `json:"input_dropout"`     // dropout probability on input features
	Seed       uint64  `json:"seed"`              // seeds initialisation, shuffling, sampling, dropout
	EvalEvery  int     `json:"eval_every"`        // validate every N epochs (>= 1)
	FullEval   bool    `json:"full_eval"`         // evaluate with all neighbours instead of the training fanouts
	Patience   int     `json:"patience"`          // stop after N evaluations without improvement (0 = never)
	GINEps     string  `json:"gin_eps,omitempty"` // GIN's ε: "0" (fixed, the default) or "learn"
	// EpochSteps, when above 0, ends an epoch after that many steps (each
	// epoch still shuffles every training item), as GraphBolt's examples'
	// --early-stop: an evaluation every EpochSteps steps on graphs whose
	// whole pass takes tens of thousands of steps.
	EpochSteps int `json:"epoch_steps,omitempty"`
	// EvalEverySteps, when above 0, also validates after every
	// EvalEverySteps training steps within an epoch (the epoch's own steps
	// 1..steps-1; its end validates as EvalEvery says); EvalEveryEpochs,
	// when above 0, does so every that fraction of an epoch's steps
	// (⌊fraction·steps⌋, at least 1: MLPerf's GNN benchmark validates
	// every 0.05 epoch). At most one of the two is set (EvalInterval).
	EvalEverySteps  int     `json:"eval_every_steps,omitempty"`
	EvalEveryEpochs float64 `json:"eval_every_epochs,omitempty"`
	// TargetAcc, when above 0, stops the run at the first validation whose
	// primary figure (Head.Primary, the figure that picks the best model:
	// node classification's accuracy, link prediction's ROC-AUC) reaches
	// it, 0 < TargetAcc <= 1; the summary reports the time to it.
	TargetAcc float64 `json:"target_acc,omitempty"`
	// GAT and RGAT: attention heads per hidden layer (a hidden layer concatenates
	// Heads heads of Hidden/Heads columns; 0 means 1), heads of the last
	// layer (averaged, each of the output's width; 0 means Heads), and the
	// dropout probability on the attention coefficients.
	Heads       int     `json:"heads,omitempty"`
	OutHeads    int     `json:"out_heads,omitempty"`
	AttnDropout float32 `json:"attn_dropout,omitempty"`
	// GATProjectFirst keeps GAT's bottom layer projecting every source
	// before it aggregates, where it would otherwise aggregate its input
	// rows per head first (its input narrower than its output;
	// nn.Config.GATProjectFirst).
	GATProjectFirst bool `json:"gat_project_first,omitempty"`
	// Activations is how hidden layers' outputs are held: "float32" (or
	// "") or "bfloat16" where the next layer reads them so (GraphSAGE).
	Activations string `json:"activations,omitempty"`
	// BottomProducts is how the bottom GraphSAGE or GAT layer multiplies:
	// "float32" (or "") or "bfloat16" operands with float32 sums
	// (nn.Config.BF16Bottom: GAT's where its bottom layer aggregates
	// first; its projection-first form stays float32).
	BottomProducts string `json:"bottom_products,omitempty"`
	// Norm is the normalisation after each hidden layer: "none" (or ""),
	// "batch" or "layer" (nn.Config.Norm).
	Norm string `json:"norm,omitempty"`
	// JK is the jumping knowledge of the top: "none" (or ""), "last",
	// "cat" or "max" (nn.Config.JK).
	JK string `json:"jk,omitempty"`
	// SyncNorm makes batch normalisation on several devices normalise by
	// the statistics of the whole group's rows (all-reduced in the step)
	// instead of each device's own (PyTorch DDP's default).
	SyncNorm bool `json:"sync_norm,omitempty"`
	// Typed graphs' settings (config_typed.go): RGCN's bases, the width
	// of featureless types' learned rows, per-relation fanouts.
	Bases            int              `json:"bases,omitempty"`
	EmbedFeatureless int              `json:"embed_featureless,omitempty"`
	RelationFanouts  map[string][]int `json:"relation_fanouts,omitempty"`
	// Link holds link prediction's settings; zero unless Task is TaskLink.
	Link LinkConfig `json:"link,omitzero"`
}

// Defaults is a sensible starting configuration (GraphSAGE, 2 layers,
// node classification).
func Defaults() Config {
	return Config{
		Model: "sage", Layers: 2, Hidden: 64, Fanouts: []int{10, 5}, Batch: 256,
		Epochs: 20, LR: 0.003, Dropout: 0.5, Seed: 1, EvalEvery: 1, Heads: 1,
	}
}

// TaskName is the run's task, TaskNode for "".
func (c Config) TaskName() string {
	if c.Task == "" {
		return TaskNode
	}
	return c.Task
}

// ModelConfig is the nn configuration for an input width and an output
// width (the classes, or the link task's embedding width).
func (c Config) ModelConfig(inDim, outDim int) nn.Config {
	mc := nn.Config{Kind: c.Model, InDim: inDim, Hidden: c.Hidden, Classes: outDim,
		Layers: c.Layers, Dropout: c.Dropout, InputDropout: c.InDropout, LearnEps: c.GINEps == "learn",
		BF16Activations: c.Activations == "bfloat16", BF16Bottom: c.BottomProducts == "bfloat16", Norm: c.Norm, JK: c.JK}
	if c.Model == nn.KindGIN {
		mc.GINFanouts = FormatFanouts(c.Fanouts) // its sums weigh what training summed
	}
	if c.Attends() {
		mc.Heads, mc.OutHeads, mc.AttnDropout = max(c.Heads, 1), c.OutHeads, c.AttnDropout
		mc.GATProjectFirst = c.GATProjectFirst
		if mc.OutHeads == 0 {
			mc.OutHeads = mc.Heads
		}
	}
	return mc
}

// EvalInterval is how many training steps apart an epoch of steps steps
// validates within itself (EvalEverySteps, or ⌊EvalEveryEpochs·steps⌋ and
// at least 1, as MLPerf's GNN reference counts its 0.05 epoch); 0 when it
// does not.
func (c Config) EvalInterval(steps int) int {
	switch {
	case c.EvalEverySteps > 0:
		return c.EvalEverySteps
	case c.EvalEveryEpochs > 0:
		// The small term keeps 0.3·10 at 3 where the product rounds below.
		return max(1, int(math.Floor(c.EvalEveryEpochs*float64(steps)+1e-9)))
	}
	return 0
}

// NormOrJK reports whether the model has normalisation layers or jumping
// knowledge.
func (c Config) NormOrJK() bool {
	return (c.Norm != "" && c.Norm != nn.NormNone) || (c.JK != "" && c.JK != nn.JKNone)
}

// FormatFanouts prints fanouts as "15,10,5".
func FormatFanouts(f []int) string {
	s := make([]string, len(f))
	for i, v := range f {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}
