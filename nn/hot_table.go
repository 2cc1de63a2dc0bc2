package nn

import "github.com/fanout-gnn/fanout/backend"

// HotTable is a Hot over a table of rows, issued through a backend's
// hot-row ops (backend.HotRows): the rows of the vertices v with
// Slot[v] >= 0 are rows Base+Slot[v] of Table. Its owner owns every
// buffer.
type HotTable struct {
	Ops   backend.HotRows
	Slot  backend.Buffer   // I32 [N]: the vertex's row in the table (after Base), or -1
	Table backend.Buffer   // F32 [rows, dim]
	Base  backend.Count    // its live value is the table's first row of the moment (Cap unused)
	Grad  backend.Buffer   // F32 [hot, out_0]: collects the hot rows' output gradient (nil: not kept)
	Extra []backend.Buffer // the hot share of layer 0's weight gradients, LayerWeights(0)'s order (nil: none)
	// InputRows says the rows are layer 0's neighbour terms, else its
	// outputs (Inputs).
	InputRows bool
}

var _ Hot = (*HotTable)(nil)

// Inputs says whether the rows are layer 0's neighbour terms.
func (h *HotTable) Inputs() bool { return h.InputRows }

// AddInputs adds the hot destinations' rows into layer 0's aggregate.
func (h *HotTable) AddInputs(blk *backend.Block, dim int, out backend.Buffer, ld, off int) {
	h.Ops.AddRows(h.Slot, h.Table, h.Base, dim, blk.SrcIDs, blk.NumDst, out, ld, off)
}

// ReplaceOutputs overwrites the hot destinations' rows of layer 0's
// output.
func (h *HotTable) ReplaceOutputs(blk *backend.Block, dim int, out backend.Buffer) {
	h.Ops.ReplaceRows(h.Slot, h.Table, h.Base, dim, blk.SrcIDs, blk.NumDst, out)
}

// TakeGradient adds the hot destinations' rows of dh into Grad (unless
// skip is set; not at all without Grad) and zeroes them.
func (h *HotTable) TakeGradient(blk *backend.Block, dim int, dh, skip backend.Buffer) {
	if h.Grad != nil {
		h.Ops.ScatterAddRows(h.Slot, h.Grad, dim, blk.SrcIDs, blk.NumDst, dh, skip)
	}
	h.Ops.ReplaceRows(h.Slot, nil, h.Base, dim, blk.SrcIDs, blk.NumDst, dh)
}

// AddWeightGradient adds Extra, the hot share of layer 0's weight
// gradients, to grads.
func (h *HotTable) AddWeightGradient(grads []backend.Buffer) {
	if h.Extra == nil {
		return
	}
	for i, g := range grads {
		h.Ops.Axpy(1, h.Extra[i], g)
	}
}
