package checkpoint

import (
	"fmt"
	"math"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// Config is one training run's configuration, as a checkpoint records it
// (package train trains with it). The zero value is not valid: start from
// Defaults and override. (The command line's flags and config
// file keys for it are listed in cmd/fanout/config.go; Validate's messages
// use those names.)
type Config struct {
	Model       string  `json:"model"`             // "sage", "gcn", "gin" or "gat"
	Layers      int     `json:"layers"`            // number of GNN layers
	Hidden      int     `json:"hidden"`            // hidden width
	Fanouts     []int   `json:"fanouts"`           // per hop from the seeds; -1 = all, 0 = none
	Batch       int     `json:"batch"`             // seeds per step
	Epochs      int     `json:"epochs"`            // passes over the training split
	LR          float32 `json:"lr"`                // Adam learning rate
	WeightDecay float32 `json:"weight_decay"`      // L2 added to gradients
	Dropout     float32 `json:"dropout"`           // dropout probability on hidden layers
	InDropout   float32 `json:"input_dropout"`     // dropout probability on input features
	Seed        uint64  `json:"seed"`              // seeds initialisation, shuffling, sampling, dropout
	EvalEvery   int     `json:"eval_every"`        // validate every N epochs (>= 1)
	FullEval    bool    `json:"full_eval"`         // evaluate with all neighbours instead of the training fanouts
	Patience    int     `json:"patience"`          // stop after N evaluations without improvement (0 = never)
	GINEps      string  `json:"gin_eps,omitempty"` // GIN's ε: "0" (fixed, the default) or "learn"
	// GAT: attention heads per hidden layer (a hidden layer concatenates
	// Heads heads of Hidden/Heads columns; 0 means 1), heads of the last
	// layer (averaged, each of the classes' width; 0 means Heads), and the
	// dropout probability on the attention coefficients.
	Heads       int     `json:"heads,omitempty"`
	OutHeads    int     `json:"out_heads,omitempty"`
	AttnDropout float32 `json:"attn_dropout,omitempty"`
	// Activations is how hidden layers' outputs are held: "float32" (or
	// "") or "bfloat16" where the next layer reads them so (GraphSAGE).
	Activations string `json:"activations,omitempty"`
	// BottomProducts is how the bottom GraphSAGE layer multiplies:
	// "float32" (or "") or "bfloat16" operands with float32 sums
	// (nn.Config.BF16Bottom).
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
}

// Defaults is a sensible starting configuration (GraphSAGE, 2 layers).
func Defaults() Config {
	return Config{
		Model: "sage", Layers: 2, Hidden: 64, Fanouts: []int{10, 5}, Batch: 256,
		Epochs: 20, LR: 0.003, Dropout: 0.5, Seed: 1, EvalEvery: 1, Heads: 1,
	}
}

// ModelConfig is the nn configuration for a dataset's input and class counts.
func (c Config) ModelConfig(inDim, classes int) nn.Config {
	mc := nn.Config{Kind: c.Model, InDim: inDim, Hidden: c.Hidden, Classes: classes,
		Layers: c.Layers, Dropout: c.Dropout, InputDropout: c.InDropout, LearnEps: c.GINEps == "learn",
		BF16Activations: c.Activations == "bfloat16", BF16Bottom: c.BottomProducts == "bfloat16", Norm: c.Norm, JK: c.JK}
	if c.Model == nn.KindGIN {
		mc.GINFanouts = FormatFanouts(c.Fanouts) // its sums weigh what training summed
	}
	if c.Model == nn.KindGAT {
		mc.Heads, mc.OutHeads, mc.AttnDropout = max(c.Heads, 1), c.OutHeads, c.AttnDropout
		if mc.OutHeads == 0 {
			mc.OutHeads = mc.Heads
		}
	}
	return mc
}

// Validate names the first field that is wrong.
func (c Config) Validate() error {
	switch {
	case c.Model != "sage" && c.Model != "gcn" && c.Model != "gin" && c.Model != "gat":
		return fmt.Errorf("model: %q is not a model (want sage, gcn, gin or gat)", c.Model)
	case c.Activations != "" && c.Activations != "float32" && c.Activations != "bfloat16":
		return fmt.Errorf("activations: %q, want float32 or bfloat16", c.Activations)
	case c.BottomProducts != "" && c.BottomProducts != "float32" && c.BottomProducts != "bfloat16":
		return fmt.Errorf("bottom-products: %q, want float32 or bfloat16", c.BottomProducts)
	case c.BottomProducts == "bfloat16" && c.Model != "sage":
		return fmt.Errorf("bottom-products: bfloat16 is GraphSAGE's only (model %s)", c.Model)
	case c.Norm != "" && c.Norm != nn.NormNone && c.Norm != nn.NormBatch && c.Norm != nn.NormLayer:
		return fmt.Errorf("norm: %q, want none, batch or layer", c.Norm)
	case c.JK != "" && c.JK != nn.JKNone && c.JK != nn.JKLast && c.JK != nn.JKCat && c.JK != nn.JKMax:
		return fmt.Errorf("jk: %q, want none, last, cat or max", c.JK)
	case c.NormOrJK() && (c.Activations == "bfloat16" || c.BottomProducts == "bfloat16"):
		return fmt.Errorf("norm %q, jk %q: normalisation and jumping knowledge need float32 activations and bottom products (activations %q, bottom-products %q)",
			c.Norm, c.JK, c.Activations, c.BottomProducts)
	case c.SyncNorm && c.Norm != nn.NormBatch:
		return fmt.Errorf("sync-norm: synchronises batch normalisation's statistics, but norm is %q (want batch)", c.Norm)
	case c.GINEps != "" && c.GINEps != "0" && c.GINEps != "learn":
		return fmt.Errorf("gin-eps: %q, want 0 or learn", c.GINEps)
	case c.Heads < 0 || c.Heads > 1024:
		return fmt.Errorf("heads: %d, want 1 to 1024", c.Heads)
	case c.Heads > 1 && c.Model != "gat":
		return fmt.Errorf("heads: %d, but only gat has attention heads (model %s)", c.Heads, c.Model)
	case c.OutHeads < 0 || c.OutHeads > 1024:
		return fmt.Errorf("out-heads: %d, want 1 to 1024 (0: as heads)", c.OutHeads)
	case c.OutHeads > 0 && c.Model != "gat":
		return fmt.Errorf("out-heads: %d, but only gat has attention heads (model %s)", c.OutHeads, c.Model)
	case !(c.AttnDropout >= 0 && c.AttnDropout < 1):
		return fmt.Errorf("attn-dropout: %g, want 0 <= p < 1", c.AttnDropout)
	case c.AttnDropout != 0 && c.Model != "gat":
		return fmt.Errorf("attn-dropout: %g, but only gat has attention (model %s)", c.AttnDropout, c.Model)
	case c.Model == "gat" && c.Layers > 1 && c.Hidden%max(c.Heads, 1) != 0:
		return fmt.Errorf("hidden: %d is not a multiple of heads %d (a GAT hidden layer concatenates its heads)", c.Hidden, c.Heads)
	case c.Layers < 1 || c.Layers > nn.MaxLayers:
		return fmt.Errorf("layers: %d, want 1 to %d", c.Layers, nn.MaxLayers)
	case c.Hidden < 1:
		return fmt.Errorf("hidden: %d, want at least 1", c.Hidden)
	case len(c.Fanouts) != c.Layers:
		return fmt.Errorf("fanouts: %d values (%s) for %d layers; give one per layer", len(c.Fanouts), FormatFanouts(c.Fanouts), c.Layers)
	case c.Batch < 1:
		return fmt.Errorf("batch: %d, want at least 1", c.Batch)
	case c.Epochs < 1:
		return fmt.Errorf("epochs: %d, want at least 1", c.Epochs)
	case !(c.LR > 0) || math.IsInf(float64(c.LR), 0):
		return fmt.Errorf("lr: %g, want a positive number", c.LR)
	case !(c.WeightDecay >= 0) || math.IsInf(float64(c.WeightDecay), 0):
		return fmt.Errorf("weight-decay: %g, want a number >= 0", c.WeightDecay)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("dropout: %g, want 0 <= p < 1", c.Dropout)
	case !(c.InDropout >= 0 && c.InDropout < 1):
		return fmt.Errorf("input-dropout: %g, want 0 <= p < 1", c.InDropout)
	case c.EvalEvery < 1:
		return fmt.Errorf("eval-every: %d, want at least 1", c.EvalEvery)
	case c.Patience < 0:
		return fmt.Errorf("patience: %d, want >= 0", c.Patience)
	}
	for i, f := range c.Fanouts {
		if f < -1 {
			return fmt.Errorf("fanouts: value %d at position %d; use -1 for all neighbours", f, i+1)
		}
	}
	return nil
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

// State is where a run stands; it is saved in checkpoints.
type State struct {
	Epoch       int     `json:"epoch"`         // epoch in progress (0-based)
	StepInEpoch int     `json:"step_in_epoch"` // next step of that epoch
	AdamT       int32   `json:"adam_t"`        // optimizer steps taken
	BestValid   float64 `json:"best_valid_acc"`
	BestEpoch   int     `json:"best_epoch"` // 1-based; 0 = none yet
	TestAtBest  float64 `json:"test_acc_at_best"`
	SinceBest   int     `json:"evals_since_best"`
	Seconds     float64 `json:"seconds"` // training wall time so far
}
