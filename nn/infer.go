package nn

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Inference runs a model one layer at a time over whole-graph tables
// (layer-wise inference). A driver splits the vertices into chunks, builds
// each chunk's block with all neighbours, and calls Layer, which gathers the
// rows of the previous layer's table for the block's sources, runs the layer
// without dropout (bias, and ReLU on hidden layers) and writes the chunk's
// rows of the next table. Every vertex's embedding is then computed once per
// layer, exactly.
//
// An Inference shares the model's parameters (it sees every update) and has
// its own workspaces, sized once for a chunk envelope, so the model's
// training workspaces are left alone. Free it before the model.
type Inference struct {
	m      *Model
	caps   Caps
	layers []layer // copies of the model's layers sharing its parameters
	ws     workspace
	x      backend.Buffer // F32 [caps.Src, max in_l]: gathered input rows
}

// inferCopier is a layer that can make a copy sharing its parameters with
// empty workspaces.
type inferCopier interface {
	inferCopy() layer
}

func (s *sageLayer) inferCopy() layer {
	c := *s
	c.ws = workspace{be: s.be}
	return &c
}

func (g *gcnLayer) inferCopy() layer {
	c := *g
	c.ws = workspace{be: g.be}
	return &c
}

// Dims returns the input and output width of model layer l (0 = bottom).
func (c Config) Dims(l int) (in, out int) { return c.dims(l) }

// NewInference allocates the workspaces of layer-wise inference for blocks
// of at most caps (destinations, edges, sources per chunk).
func (m *Model) NewInference(caps Caps) (*Inference, error) {
	if m.hetero != nil {
		return nil, fmt.Errorf("nn: NewInference: layer-wise inference is the one-type models'; a typed model (%s) evaluates sampled", m.cfg.Kind)
	}
	if err := caps.validate(0); err != nil {
		return nil, fmt.Errorf("nn: NewInference: %w", err)
	}
	if m.layers == nil {
		return nil, errors.New("nn: NewInference: the model has been freed")
	}
	inf := &Inference{m: m, caps: caps, ws: workspace{be: m.be}}
	maxIn := 0
	for l, ly := range m.layers {
		in, _ := m.cfg.dims(l)
		maxIn = max(maxIn, in)
		cp, ok := ly.(inferCopier)
		if !ok {
			inf.Free()
			return nil, fmt.Errorf("nn: NewInference: layer %d (%T) has no layer-wise inference", l, ly)
		}
		c := cp.inferCopy()
		if err := c.reserve(caps); err != nil {
			inf.Free()
			return nil, fmt.Errorf("nn: NewInference: layer %d: %w", l, err)
		}
		inf.layers = append(inf.layers, c)
	}
	inf.x = inf.ws.alloc("inference inputs", backend.F32, caps.Src*maxIn)
	if err := inf.ws.err; err != nil {
		inf.Free()
		return nil, err
	}
	return inf, nil
}

// Caps is the chunk envelope the inference was sized for.
func (inf *Inference) Caps() Caps { return inf.caps }

// Layer computes model layer l for the destinations of blk: it gathers the
// rows of table (F32 [N, in_l], row v = vertex v's input to layer l; the
// features for l = 0) for blk's sources, runs the layer with deg (F32 [N]
// full-graph degrees; GCN only, may be nil for SAGE), adds the bias, applies
// ReLU below the top layer, and writes out rows [0, NumDst) (out: F32
// [blk.NumDst.Cap, out_l]). blk's capacities must not exceed the reserved
// caps. Errors are usage errors found on the host; backend errors surface
// at Sync.
func (inf *Inference) Layer(l int, blk *backend.Block, table, deg, out backend.Buffer) error {
	return inf.layer(l, blk, table, deg, out, true)
}

// LayerPre is Layer without the bias and the activation: the output of
// model layer l's graph layer alone, as a training pass computes it before
// the bias (no dropout). The hybrid mode's CPU computes its hot vertices'
// bottom-layer rows (Hot) with it.
func (inf *Inference) LayerPre(l int, blk *backend.Block, table, deg, out backend.Buffer) error {
	return inf.layer(l, blk, table, deg, out, false)
}

// LayerPreBackward overwrites the gradients (Param.G) of model layer l's
// weights (LayerWeights(l), shared with the model) from dh (F32
// [blk.NumDst.Cap, out_l]), the gradient of the output of the LayerPre
// call just made on blk: the share of the weight gradient of rows computed
// by LayerPre.
func (inf *Inference) LayerPreBackward(l int, blk *backend.Block, dh backend.Buffer) error {
	if inf.layers == nil {
		return errors.New("nn: inference: freed")
	}
	if l < 0 || l >= len(inf.layers) {
		return fmt.Errorf("nn: inference backward: layer %d out of range [0, %d)", l, len(inf.layers))
	}
	_, out := inf.m.cfg.dims(l)
	if dh == nil || dh.DType() != backend.F32 || dh.Len() < blk.NumDst.Cap*out {
		return fmt.Errorf("nn: inference backward: dh must be F32 [%d, %d]", blk.NumDst.Cap, out)
	}
	inf.layers[l].backward(blk, inf.x, dh, nil)
	return nil
}

func (inf *Inference) layer(l int, blk *backend.Block, table, deg, out backend.Buffer, finish bool) error {
	if err := inf.check(l, blk, table, deg, out, -1); err != nil {
		return fmt.Errorf("nn: inference layer %d: %w", l, err)
	}
	be, cfg := inf.m.be, inf.m.cfg
	in, dim := cfg.dims(l)
	ly := inf.layers[l]
	be.Gather(table, in, blk.SrcIDs, blk.NumSrc, inf.x)
	ly.prepare(blk, deg)
	ly.forward(blk, inf.x, out, pass{})
	if !finish {
		return nil
	}
	if n := inf.m.norms[l]; n != nil {
		n.forwardAct(out, blk.NumDst, ly.bias().W, false, normAct{relu: true}, out)
		return nil
	}
	be.BiasActDropout(out, blk.NumDst, dim, ly.bias().W, cfg.hiddenOut(l), 0, backend.Rand{}, nil, out)
	return nil
}

// check validates a layer call whose out has rows of width (-1: the
// layer's output width).
func (inf *Inference) check(l int, blk *backend.Block, table, deg, out backend.Buffer, width int) error {
	if inf.layers == nil {
		return errors.New("the inference has been freed")
	}
	cfg := inf.m.cfg
	if l < 0 || l >= cfg.Layers {
		return fmt.Errorf("layer out of range [0, %d)", cfg.Layers)
	}
	if blk == nil {
		return errors.New("nil block")
	}
	got := Caps{Dst: blk.NumDst.Cap, Edges: blk.NumEdges.Cap, Src: blk.NumSrc.Cap}
	if got.Dst > inf.caps.Dst || got.Edges > inf.caps.Edges || got.Src > inf.caps.Src {
		return fmt.Errorf("block caps %+v exceed the reserved %+v", got, inf.caps)
	}
	in, dim := cfg.dims(l)
	if table == nil || (table.DType() != backend.F32 && table.DType() != backend.BF16) || table.Len() == 0 || table.Len()%in != 0 {
		return fmt.Errorf("table must be F32 (or BF16) [N, %d] with N > 0", in)
	}
	if width < 0 {
		width = dim
	}
	if out == nil || out.DType() != backend.F32 || out.Len() < got.Dst*width {
		return fmt.Errorf("out must be F32 [%d, %d]", got.Dst, width)
	}
	if cfg.needsDegree() && (deg == nil || deg.DType() != backend.F32) {
		return fmt.Errorf("%s needs an F32 degree table", cfg.Kind)
	}
	return nil
}

// Free releases the inference workspaces (not the shared parameters).
func (inf *Inference) Free() {
	for _, ly := range inf.layers {
		ly.release()
	}
	inf.layers = nil
	inf.ws.release()
	inf.x = nil
}
