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
)

// inputDropoutStream is the Philox stream of dropout on the input features.
const inputDropoutStream = 127

// MaxLayers bounds Config.Layers: dropout at layer l uses Philox stream
// 128+l and initialisation stream 200+l, which must stay below 200 and 256.
const MaxLayers = 32

// Config describes a model. Layer 0 maps InDim to Hidden, hidden layers map
// Hidden to Hidden, and the top layer maps to Classes (with Layers == 1 the
// only layer maps InDim to Classes).
type Config struct {
	Kind    string  // KindSAGE, KindGCN or KindGIN
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
}

// Validate returns an error naming the first invalid field.
func (c Config) Validate() error {
	switch c.Kind {
	case KindSAGE, KindGCN, KindGIN:
	default:
		return fmt.Errorf("nn: config Kind %q: want %q, %q or %q", c.Kind, KindSAGE, KindGCN, KindGIN)
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
	return nil
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
	if l == c.Layers-1 {
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
