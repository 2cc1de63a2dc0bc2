package nn

import (
	"fmt"
	"math"
)

// Model kinds accepted by Config.Kind.
const (
	KindSAGE = "sage" // GraphSAGE with mean aggregation
	KindGCN  = "gcn"  // Kipf-Welling graph convolution
	KindGIN  = "gin"  // graph isomorphism network, two-layer MLP
	KindGAT  = "gat"  // graph attention network
)

// attends reports whether the kind is a graph attention model's (GAT, and
// the relational GAT of typed graphs): Heads, OutHeads and AttnDropout are
// its settings.
func attends(kind string) bool { return kind == KindGAT || kind == KindRGAT }

// inputDropoutStream is the Philox stream of dropout on the input features.
const inputDropoutStream = 127

// attnDropoutStream is the Philox stream of GAT's attention dropout at
// model layer 0; layer l uses attnDropoutStream+l.
const attnDropoutStream = 160

// MaxLayers bounds Config.Layers: dropout at layer l uses Philox stream
// 128+l, attention dropout 160+l and initialisation 200+l, which must stay
// below 160, 200 and 256.
const MaxLayers = 32

// Config describes a model. Layer 0 maps InDim to Hidden, hidden layers map
// Hidden to Hidden, and the top layer maps to Classes (with Layers == 1 the
// only layer maps InDim to Classes).
type Config struct {
	Kind    string  // KindSAGE, KindGCN, KindGIN or KindGAT; typed graphs' KindRSAGE, KindRGCN or KindRGAT
	InDim   int     // input feature width
	Hidden  int     // hidden width (unused when Layers == 1)
	Classes int     // output width (number of classes)
	Layers  int     // number of graph layers, 1..MaxLayers
	Dropout float32 // dropout probability after each hidden layer, in [0, 1)
	// InputDropout is the dropout probability on the input features of the
	// bottom layer during training (Kipf and Welling's GCN uses 0.5), in [0, 1).
	InputDropout float32
	// LearnEps makes GIN's ε a trained parameter (else it is 0).
	LearnEps bool
	// Heads is GAT's (and RGAT's) number of attention heads per hidden
	// layer (0 for the other kinds): a hidden layer concatenates Heads
	// heads of Hidden/Heads columns.
	Heads int
	// OutHeads is GAT's number of attention heads of the top layer (0 for
	// the other kinds), which averages them, each of Classes columns.
	OutHeads int
	// AttnDropout is GAT's dropout probability on the attention
	// coefficients during training, in [0, 1) (0 for the other kinds).
	AttnDropout float32
	// GATProjectFirst keeps GAT's bottom layer in its projection-first
	// form (every source projected, then aggregated, as PyG's GATConv)
	// where it would otherwise take its aggregate-first one (gat_first.go:
	// the input rows aggregated per head, then projected; fewer bytes per
	// edge and fewer products). The two have the same parameters and
	// results to float32 rounding. The aggregate-first form applies where
	// the bottom layer concatenates its heads (more than one layer, or a
	// jumping knowledge's head) and InDim < Hidden; KindGAT only.
	GATProjectFirst bool `json:",omitempty"`
	// BF16Activations keeps a hidden layer's output (after bias,
	// activation and dropout) as bfloat16 where the next layer reads it so
	// (GraphSAGE's concatenation widens it as it reads): half the bytes
	// written and aggregated. Products, gradients and the pre-activation
	// stay float32.
	BF16Activations bool
	// BF16Bottom multiplies the bottom layer in bfloat16 (mixed
	// precision) where it has that form (bf16Bottom): the products sum in
	// float32, and the weights, their gradients and Adam stay float32.
	// GraphSAGE: its concatenation is stored rounded, its weights are
	// rounded into a copy each forward pass, its output (below another
	// layer) is written rounded and kept so through bias, ReLU and
	// dropout, and its output gradient is rounded for the weight
	// gradient; its two products read half the bytes, and its output is
	// written and aggregated at half the bytes (an even bottom output
	// width). GAT's aggregate-first bottom layer (even input and head
	// widths): its per-head aggregates and their gradient are stored
	// rounded, its weights are rounded into a copy each forward pass and
	// its output gradient is rounded for its products; its output stays
	// float32 (the next layer projects it); the aggregates, the layer's
	// largest buffers, are written and read at half the bytes. GAT's
	// projection-first bottom layer stays float32. GraphSAGE and GAT
	// only, without hot vertices.
	BF16Bottom bool
	// Norm is the normalisation after each hidden layer: NormNone ("" or
	// "none"), NormBatch or NormLayer (see norm.go).
	Norm string `json:",omitempty"`
	// JK is the jumping knowledge of the top (see jk.go): "" or JKNone
	// (none: the top layer maps to the classes), JKLast, JKCat or JKMax
	// (every layer is hidden, and a linear head maps the last layer's
	// output, the layers' outputs concatenated, or their element-wise
	// maximum to the classes), as PyTorch Geometric's BasicGNN.
	JK string `json:",omitempty"`
	// GINFanouts are the fanouts GIN was trained with, per hop from the
	// seeds as the trainer's --fanouts ("15,10": the top layer sampled 15,
	// -1: every neighbour): a layer trained on k sampled neighbours sums
	// each sampled one at weight min(deg, k)/sampled, so 1 in training and
	// the training sum's expectation when more are summed (see gin.go).
	// Empty: every layer as trained on all neighbours (a sample estimates
	// the full sum), as GIN checkpoints before the field were. GIN only.
	GINFanouts string `json:",omitempty"`
	// Types, Relations and Target are a typed graph's schema (KindRSAGE,
	// KindRGCN, KindRGAT; hetero_config.go): its vertex types with their input
	// widths, its relations, and the type whose vertices are classified
	// (InDim is that type's input width). Bases is RGCN's basis
	// decomposition (0: a weight per relation).
	Types     []TypeSpec `json:",omitempty"`
	Relations []RelSpec  `json:",omitempty"`
	Target    int        `json:",omitempty"`
	Bases     int        `json:",omitempty"`
}

// Validate returns an error naming the first invalid field.
func (c Config) Validate() error {
	switch c.Kind {
	case KindSAGE, KindGCN, KindGIN, KindGAT, KindRSAGE, KindRGCN, KindRGAT:
	default:
		return fmt.Errorf("nn: config Kind %q: want %q, %q, %q, %q, %q, %q or %q", c.Kind, KindSAGE, KindGCN, KindGIN, KindGAT, KindRSAGE, KindRGCN, KindRGAT)
	}
	if !c.Typed() && (len(c.Types) > 0 || len(c.Relations) > 0 || c.Bases != 0) {
		return fmt.Errorf("nn: config %s: a schema of types and relations is the typed models' (rsage, rgcn, rgat)", c.Kind)
	}
	if c.InDim <= 0 {
		return fmt.Errorf("nn: config InDim %d: must be positive", c.InDim)
	}
	if c.Classes <= 0 {
		return fmt.Errorf("nn: config Classes %d: must be positive", c.Classes)
	}
	if c.Layers < 1 || c.Layers > MaxLayers {
		return fmt.Errorf("nn: config Layers %d: must be in [1, %d]", c.Layers, MaxLayers)
	}
	if c.Layers > 1 && c.Hidden <= 0 {
		return fmt.Errorf("nn: config Hidden %d: must be positive with %d layers", c.Hidden, c.Layers)
	}
	if math.IsNaN(float64(c.Dropout)) || c.Dropout < 0 || c.Dropout >= 1 {
		return fmt.Errorf("nn: config Dropout %v: must be in [0, 1)", c.Dropout)
	}
	if math.IsNaN(float64(c.InputDropout)) || c.InputDropout < 0 || c.InputDropout >= 1 {
		return fmt.Errorf("nn: config InputDropout %v: must be in [0, 1)", c.InputDropout)
	}
	if c.BF16Bottom && c.Kind != KindSAGE && c.Kind != KindGAT {
		return fmt.Errorf("nn: config BF16Bottom: only %q and %q multiply their bottom layer in bfloat16, not %q", KindSAGE, KindGAT, c.Kind)
	}
	if _, out := c.dims(0); c.BF16Bottom && c.Kind == KindSAGE && out%2 != 0 {
		return fmt.Errorf("nn: config BF16Bottom: the bottom layer's output width %d must be even", out)
	}
	if c.Typed() {
		if err := c.validateTyped(); err != nil {
			return err
		}
	}
	if err := c.validateNormJK(); err != nil {
		return err
	}
	if _, err := c.ginFanouts(); err != nil {
		return err
	}
	return c.validateGAT()
}

// bf16Bottom reports whether the bottom layer multiplies in bfloat16:
// BF16Bottom, where the layer has that form (BF16BottomApplies).
func (c Config) bf16Bottom() bool {
	return c.BF16Bottom && c.BF16BottomApplies()
}

// BF16BottomApplies reports whether the bottom layer has the bfloat16
// form BF16Bottom asks for: GraphSAGE's, and GAT's aggregate-first one
// with even input and head widths (its products' bfloat16 operands need
// them). Elsewhere BF16Bottom leaves the products float32. An InDim of 0
// (a width not known yet) counts as an even one narrower than hidden.
func (c Config) BF16BottomApplies() bool {
	switch {
	case c.Layers < 1 || c.Kind != KindSAGE && c.Kind != KindGAT:
		return false
	case c.Kind == KindSAGE:
		return true
	}
	_, out := c.dims(0)
	_, dim, _ := c.headDims(0, out)
	return c.aggregatesFirst(0, c.InDim) && c.InDim%2 == 0 && dim%2 == 0
}

// bf16BottomOutput reports whether the bottom layer's output is bfloat16
// (bf16Bottom's GraphSAGE, below another layer).
func (c Config) bf16BottomOutput() bool {
	return c.bf16Bottom() && c.Kind == KindSAGE && c.Layers > 1
}

// validateGAT checks Heads, OutHeads and AttnDropout: GAT's and RGAT's,
// or zero for the others.
func (c Config) validateGAT() error {
	if c.GATProjectFirst && c.Kind != KindGAT {
		return fmt.Errorf("nn: config GATProjectFirst: only %q has a choice of bottom layer forms, not %q", KindGAT, c.Kind)
	}
	if !attends(c.Kind) {
		if c.Heads != 0 || c.OutHeads != 0 || c.AttnDropout != 0 {
			return fmt.Errorf("nn: config Heads %d, OutHeads %d, AttnDropout %v: only %q and %q have attention", c.Heads, c.OutHeads, c.AttnDropout, KindGAT, KindRGAT)
		}
		return nil
	}
	if c.Heads < 1 || c.Heads > 1024 {
		return fmt.Errorf("nn: config Heads %d: must be in [1, 1024]", c.Heads)
	}
	if c.OutHeads < 1 || c.OutHeads > 1024 {
		return fmt.Errorf("nn: config OutHeads %d: must be in [1, 1024]", c.OutHeads)
	}
	if c.hiddenOut(0) && c.Hidden%c.Heads != 0 {
		return fmt.Errorf("nn: config Hidden %d: must be a multiple of Heads %d (a hidden layer concatenates its heads)", c.Hidden, c.Heads)
	}
	if math.IsNaN(float64(c.AttnDropout)) || c.AttnDropout < 0 || c.AttnDropout >= 1 {
		return fmt.Errorf("nn: config AttnDropout %v: must be in [0, 1)", c.AttnDropout)
	}
	return nil
}

// headDims are an attention layer's heads and width per head at layer l of
// output width out: a hidden layer concatenates Heads heads of out/Heads
// columns; the top layer (below no jumping knowledge's head) averages
// OutHeads heads of out (the classes) columns (mean).
func (c Config) headDims(l, out int) (heads, dim int, mean bool) {
	if !c.hiddenOut(l) {
		return c.OutHeads, out, true
	}
	return c.Heads, out / c.Heads, false
}

// needsDegree reports whether the model reads full-graph degrees (GCN's
// normalisation, GIN's sum rescaling).
func (c Config) needsDegree() bool { return c.Kind == KindGCN || c.Kind == KindGIN }

// dims returns the input and output width of layer l.
func (c Config) dims(l int) (in, out int) {
	in, out = c.Hidden, c.Hidden
	if l == 0 {
		in = c.InDim
	}
	if !c.hiddenOut(l) {
		out = c.Classes
	}
	return in, out
}

// Caps is the capacity envelope of one block: destinations, sampled edges
// and sources (destinations first). It matches sample.Caps.
type Caps struct {
	Dst, Edges, Src int
}

func (c Caps) validate(l int) error {
	if c.Dst <= 0 || c.Edges < 0 || c.Src < c.Dst {
		return fmt.Errorf("nn: caps of block %d %+v: want Dst > 0, Edges >= 0, Src >= Dst", l, c)
	}
	return nil
}
