package hot

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/train"
)

// Rows are hot vertices' bottom-layer rows as a training step takes them
// (train.Hot, and through it nn.Hot): the rows of the vertices v with
// slot[v] >= 0 are rows base+slot[v] of table, issued through the
// backend's hot-row ops (backend.HotRows). The driver owns every buffer.
type Rows struct {
	ops    backend.HotRows
	slot   backend.Buffer   // I32 [N]: the vertex's row in the table (after base), or -1
	table  backend.Buffer   // F32 [rows, dim], host memory the device reads in place
	base   backend.Count    // its live value is the first table row of this super-batch (Cap unused)
	grad   backend.Buffer   // F32 [hot, out_0]: collects the hot rows' output gradient (nil: inputs)
	extra  []backend.Buffer // the hot share of layer 0's weight gradients (nil: inputs)
	inputs bool             // the rows are layer 0's neighbour terms, else its outputs
	bottom backend.Graph    // the graph with the hot vertices masked
}

var _ train.Hot = (*Rows)(nil)

// Inputs says whether the rows are layer 0's neighbour terms.
func (r *Rows) Inputs() bool { return r.inputs }

// Bottom is the graph the bottom hop samples.
func (r *Rows) Bottom() backend.Graph { return r.bottom }

// AddInputs adds the hot destinations' rows into layer 0's aggregate.
func (r *Rows) AddInputs(blk *backend.Block, dim int, out backend.Buffer, ld, off int) {
	r.ops.AddRows(r.slot, r.table, r.base, dim, blk.SrcIDs, blk.NumDst, out, ld, off)
}

// ReplaceOutputs overwrites the hot destinations' rows of layer 0's
// output.
func (r *Rows) ReplaceOutputs(blk *backend.Block, dim int, out backend.Buffer) {
	r.ops.ReplaceRows(r.slot, r.table, r.base, dim, blk.SrcIDs, blk.NumDst, out)
}

// TakeGradient adds the hot destinations' rows of dh into grad (unless
// skip is set) and zeroes them.
func (r *Rows) TakeGradient(blk *backend.Block, dim int, dh, skip backend.Buffer) {
	if r.grad != nil {
		r.ops.ScatterAddRows(r.slot, r.grad, dim, blk.SrcIDs, blk.NumDst, dh, skip)
	}
	r.ops.ReplaceRows(r.slot, nil, r.base, dim, blk.SrcIDs, blk.NumDst, dh)
}

// AddWeightGradient adds the hot share of layer 0's weight gradients.
func (r *Rows) AddWeightGradient(grads []backend.Buffer) {
	if r.extra == nil {
		return
	}
	for i, g := range grads {
		r.ops.Axpy(1, r.extra[i], g)
	}
}
