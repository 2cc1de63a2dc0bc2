// Package link trains link predictors: a step takes a batch of positive
// training edges, draws negatives for them on the backend from the run's
// Philox keys, samples the neighbourhoods of every endpoint with the
// node path's sampler (the batch's own edges taken out where asked),
// computes embeddings with any of nn's models, scores the pairs with a
// dot or MLP decoder and learns from their binary cross-entropy. The
// whole step is backend ops reading the step's clock from backend memory,
// so the eager driver and the replay driver (one captured step launched
// for every batch) issue the same ops and agree bitwise.
package link

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/train"
)

// Decoders, negative distributions and exclusions.
const (
	DecoderDot     = "dot" // score = <e_u, e_v>
	DecoderMLP     = "mlp" // score = MLP(e_u ⊙ e_v): Linear, ReLU, Linear
	DistUniform    = "uniform"
	DistDegree     = "degree"
	ExcludeNone    = "none"    // DGL's default: the batch's edges stay in its neighbourhoods
	ExcludeSelf    = "self"    // the batch's edges leave them
	ExcludeReverse = "reverse" // the batch's edges and their reverses leave them
)

// Philox streams of the link step (the node path's are below 128 and from
// 127 up to 250, and 255).
const negativeStream = 251

// Config is a link-prediction run: the node path's model and sampling
// fields (Batch counts positive edges per step; Model's output width is
// Embed) and the link task's own.
type Config struct {
	train.Config
	Embed        int    // embedding width, the model's output; 0: Hidden
	Negatives    int    // negatives per positive edge
	NegativeDist string // DistUniform or DistDegree
	Decoder      string // DecoderDot or DecoderMLP
	DecoderWidth int    // the MLP decoder's hidden width; 0: Embed
	Exclude      string // ExcludeReverse, ExcludeSelf or ExcludeNone
	// EvalNegatives, when above 0, ranks every held-out edge (u, v)
	// against that many negatives (u, w) drawn at evaluation time (evalneg.go)
	// instead of the dataset's stored ones: ogbl-citation2's protocol of
	// 1,000 random destinations per positive, at a scale where storing them
	// would not fit.
	EvalNegatives int `json:",omitempty"`
	// EvalEdges, when above 0, scores only the first EvalEdges edges of
	// each held-out set (the split shuffled them, so they are a uniform
	// sample); 0 scores all.
	EvalEdges int `json:",omitempty"`
	// EpochSteps, when above 0, ends an epoch after that many steps (each
	// epoch still shuffles every training edge), as GraphBolt's examples'
	// --early-stop: an evaluation every EpochSteps steps on graphs whose
	// whole pass takes tens of thousands of steps.
	EpochSteps int `json:",omitempty"`
	// Features is how the feature table is held on the backend: F32,
	// BF16 (gathered rows widened to float32) or 0 (as the dataset holds
	// it).
	Features backend.DType
}

// Defaults are the node path's defaults with one uniform negative per
// positive, the dot decoder and the batch's edges and their reverses
// excluded from its neighbourhoods.
func Defaults() Config {
	return Config{Config: train.Defaults(), Negatives: 1, NegativeDist: DistUniform, Decoder: DecoderDot, Exclude: ExcludeReverse}
}

// embed is the embedding width.
func (c Config) embed() int {
	if c.Embed > 0 {
		return c.Embed
	}
	return c.Hidden
}

// decoderWidth is the MLP decoder's hidden width.
func (c Config) decoderWidth() int {
	if c.DecoderWidth > 0 {
		return c.DecoderWidth
	}
	return c.embed()
}

// Validate names the first field that is wrong.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch {
	case c.Embed < 0:
		return fmt.Errorf("embed: %d, want >= 0 (0: the hidden width)", c.Embed)
	case c.Negatives < 1:
		return fmt.Errorf("negatives: %d, want >= 1", c.Negatives)
	case c.NegativeDist != DistUniform && c.NegativeDist != DistDegree:
		return fmt.Errorf("negative-dist: %q, want uniform or degree", c.NegativeDist)
	case c.Decoder != DecoderDot && c.Decoder != DecoderMLP:
		return fmt.Errorf("decoder: %q, want dot or mlp", c.Decoder)
	case c.DecoderWidth < 0:
		return fmt.Errorf("decoder-width: %d, want >= 0", c.DecoderWidth)
	case c.Exclude != ExcludeReverse && c.Exclude != ExcludeSelf && c.Exclude != ExcludeNone:
		return fmt.Errorf("exclude: %q, want reverse, self or none", c.Exclude)
	case c.EvalNegatives < 0:
		return fmt.Errorf("eval-negatives: %d, want >= 0 (0: the dataset's stored negatives)", c.EvalNegatives)
	case c.EvalEdges < 0:
		return fmt.Errorf("eval-edges: %d, want >= 0 (0: every held-out edge)", c.EvalEdges)
	case c.EpochSteps < 0:
		return fmt.Errorf("epoch-steps: %d, want >= 0 (0: a whole pass over the training edges)", c.EpochSteps)
	case c.Features != 0 && c.Features != backend.F32 && c.Features != backend.BF16:
		return fmt.Errorf("features: %s, want float32 or bfloat16", c.Features)
	}
	return nil
}
