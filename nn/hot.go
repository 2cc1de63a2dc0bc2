package nn

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// hotInputLayer is a layer that can take the neighbour term of its
// aggregate for some destinations from a table (Hot.Inputs): it aggregates
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

// addHot adds the hot destinations' table rows into the neighbour term of
// an aggregate: dim columns at off of out's rows of ld (nothing without
// hot rows).
func addHot(be backend.Backend, h *Hot, blk *backend.Block, dim int, out backend.Buffer, ld, off int) {
	if h != nil {
		be.AddRows(h.Slot, h.Table, h.Base, dim, blk.SrcIDs, blk.NumDst, out, ld, off)
	}
}

// HotInputs says whether the model's bottom layer can take hot vertices'
// aggregated neighbour input from a table (Hot.Inputs): GraphSAGE, GIN,
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
// inputs (Hot.Inputs) with it. The term does not depend on the weights.
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
