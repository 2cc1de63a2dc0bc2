package nn

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Hot is the seam through which a training pass takes the bottom-layer rows
// of the hybrid mode's hot vertices, computed elsewhere (HotTable implements
// it over backend.HotRows for package train/hybrid/hot's driver). The rows
// are either layer 0's outputs before its bias (Inference's LayerPre):
// Forward replaces the hot destinations' rows of layer 0's output with them,
// and Backward hands their rows of the output gradient over and zeroes them
// before layer 0's backward, so that layer 0's weights learn from the other
// destinations only (the hot rows' share of the weight gradient is computed
// elsewhere and added after), while the bias, the activation, dropout and
// every layer above treat them as any row. Or, with Inputs, they are layer
// 0's neighbour terms (Inference.LayerNeighbours), which layer 0 adds into
// its aggregate before its product (the hot destination has no sampled
// neighbours of its own there), so the product with the weights of the
// moment, its gradient and every layer above treat the row as any other;
// only models whose layer 0 aggregates before its product (Model.HotInputs).
type Hot interface {
	// Inputs says whether the rows are layer 0's neighbour terms (else its
	// outputs).
	Inputs() bool
	// AddInputs adds the hot destinations' rows of blk into the neighbour
	// term of layer 0's aggregate: dim columns at off of out's rows of ld
	// (out F32 [blk.NumDst.Cap, ld]). With Inputs only.
	AddInputs(blk *backend.Block, dim int, out backend.Buffer, ld, off int)
	// ReplaceOutputs overwrites the hot destinations' rows of layer 0's
	// output (out F32 [blk.NumDst.Cap, dim]) with theirs. Without Inputs.
	ReplaceOutputs(blk *backend.Block, dim int, out backend.Buffer)
	// TakeGradient takes the hot destinations' rows of layer 0's output
	// gradient dh (F32 [blk.NumDst.Cap, dim]): it keeps them for whoever
	// computed the rows (nothing is kept while skip, an I32 flag that may
	// be nil, is non-zero) and zeroes them. Without Inputs.
	TakeGradient(blk *backend.Block, dim int, dh, skip backend.Buffer)
	// AddWeightGradient adds the hot rows' share of layer 0's weight
	// gradient, computed elsewhere, to grads (LayerWeights(0)'s gradients,
	// in order) after layer 0's backward. Without Inputs.
	AddWeightGradient(grads []backend.Buffer)
}

// hotInputLayer is a layer that can take the neighbour term of its
// aggregate for some destinations from a table (Hot's Inputs): it aggregates
// its input before its product, so the table's rows enter the product like
// the rows it aggregates itself.
type hotInputLayer interface {
	// hotInputs says whether the layer, as reserved, aggregates before its
	// product.
	hotInputs() bool
	// neighbours writes the neighbour term of the layer's aggregate for
	// blk's destinations (out F32 [blk.NumDst.Cap, in]) as forward computes
	// it, without the destination's own term; prepare must have run on blk.
	neighbours(blk *backend.Block, x, out backend.Buffer)
}

// addHot adds the hot destinations' rows into the neighbour term of an
// aggregate: dim columns at off of out's rows of ld (nothing without hot
// rows).
func addHot(h Hot, blk *backend.Block, dim int, out backend.Buffer, ld, off int) {
	if h != nil {
		h.AddInputs(blk, dim, out, ld, off)
	}
}

// HotInputs says whether the model's bottom layer can take hot vertices'
// aggregated neighbour input from a table (Hot's Inputs): GraphSAGE, GIN,
// and GCN when it aggregates before its product (after Reserve). GAT
// cannot: its attention weighs each neighbour by the layer's weights.
func (m *Model) HotInputs() bool {
	if len(m.layers) == 0 {
		return false
	}
	h, ok := m.layers[0].(hotInputLayer)
	return ok && h.hotInputs()
}

// LayerNeighbours writes the neighbour term of model layer l's aggregate
// for blk's destinations (out F32 [blk.NumDst.Cap, in_l]), read from
// table's rows of blk's sources: what the layer adds to each destination's
// own term before its product. The hybrid mode's CPU computes hot vertices'
// inputs (Hot's Inputs) with it. The term does not depend on the weights.
func (inf *Inference) LayerNeighbours(l int, blk *backend.Block, table, deg, out backend.Buffer) error {
	if inf.layers == nil {
		return errors.New("nn: inference: freed")
	}
	if l < 0 || l >= len(inf.layers) {
		return fmt.Errorf("nn: inference neighbours: layer %d out of range [0, %d)", l, len(inf.layers))
	}
	cfg := inf.m.cfg
	in, _ := cfg.dims(l)
	if err := inf.check(l, blk, table, deg, out, in); err != nil {
		return fmt.Errorf("nn: inference neighbours: %w", err)
	}
	// The term does not depend on the order a GCN copy chose for its own
	// envelope: only the model's layer must aggregate first (HotInputs).
	h, ok := inf.layers[l].(hotInputLayer)
	if !ok {
		return fmt.Errorf("nn: inference neighbours: a %s layer does not aggregate its input before its product", cfg.Kind)
	}
	inf.m.be.Gather(table, in, blk.SrcIDs, blk.NumSrc, inf.x)
	inf.layers[l].prepare(blk, deg)
	h.neighbours(blk, inf.x, out)
	return nil
}

func (s *sageLayer) hotInputs() bool { return true }
func (s *sageLayer) neighbours(blk *backend.Block, x, out backend.Buffer) {
	s.be.Aggregate(blk, s.edgeW, nil, x, s.in, out)
}

func (g *ginLayer) hotInputs() bool { return true }
func (g *ginLayer) neighbours(blk *backend.Block, x, out backend.Buffer) {
	g.be.Aggregate(blk, g.edgeW, nil, x, g.in, out)
}

func (g *gcnLayer) hotInputs() bool { return g.order == gcnAggFirst }
func (g *gcnLayer) neighbours(blk *backend.Block, x, out backend.Buffer) {
	g.be.Aggregate(blk, g.edgeW, nil, x, g.in, out)
}
