package hot

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// Rows are hot vertices' bottom-layer rows as a training step takes them
// (train.Hot): the model's nn.Hot over the driver's table, and the graph
// the bottom hop samples. The driver owns every buffer.
type Rows struct {
	nn.HotTable
	bottom backend.Graph // the graph with the hot vertices masked
}

var _ train.Hot = (*Rows)(nil)

// Bottom is the graph the bottom hop samples.
func (r *Rows) Bottom() backend.Graph { return r.bottom }
