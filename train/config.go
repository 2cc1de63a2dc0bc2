// Package train runs the training step and the drivers around it. step.go
// holds one iteration over a preallocated Plan (sample, gather, forward,
// loss, backward, Adam); eager.go drives it batch by batch from the host.
// Later modes (replay, hybrid, multi-GPU) are drivers around the same step.
package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// Config is one training run's configuration. The zero value is not valid:
// start from Defaults and override. (The command line's flags and config
// file keys for it are listed in cmd/fanout/config.go; Validate's messages
// use those names.)
type Config struct {
	Model       string  `json:"model"`             // "sage", "gcn" or "gin"
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
}

// Defaults is a sensible starting configuration (GraphSAGE, 2 layers).
func Defaults() Config {
	return Config{
		Model: "sage", Layers: 2, Hidden: 64, Fanouts: []int{10, 5}, Batch: 256,
		Epochs: 20, LR: 0.003, Dropout: 0.5, Seed: 1, EvalEvery: 1,
	}
}

// ModelConfig is the nn configuration for a dataset's input and class counts.
func (c Config) ModelConfig(inDim, classes int) nn.Config {
	return nn.Config{Kind: c.Model, InDim: inDim, Hidden: c.Hidden, Classes: classes,
		Layers: c.Layers, Dropout: c.Dropout, InputDropout: c.InDropout, LearnEps: c.GINEps == "learn"}
}

// Validate names the first field that is wrong.
func (c Config) Validate() error {
	switch {
	case c.Model != "sage" && c.Model != "gcn" && c.Model != "gin":
		return fmt.Errorf("model: %q is not a model (want sage, gcn or gin)", c.Model)
	case c.GINEps != "" && c.GINEps != "0" && c.GINEps != "learn":
		return fmt.Errorf("gin-eps: %q, want 0 or learn", c.GINEps)
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

// FormatFanouts prints fanouts as "15,10,5".
func FormatFanouts(f []int) string {
	s := make([]string, len(f))
	for i, v := range f {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}
