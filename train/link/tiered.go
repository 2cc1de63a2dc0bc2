package link

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
)

// CacheSizer decides how many feature rows a tiered store's cache takes,
// from the backend memory that the trainer holds once it is built
// (resident), one row's bytes and the rows in all.
type CacheSizer func(resident, rowBytes, rows int64) (int64, error)

// NewTiered builds a trainer of its own (NewShared without a group) whose
// feature rows are served by a tiered store (featstore.Tiered, the hybrid
// mode's feature tier): every row in host memory, which the gather reads
// in place, and the first rows of DegreeOrder in a cache in backend memory
// that size sizes once the trainer holds the rest. The store holds rows as
// cfg.Features says. The trainer owns the store; read its counters
// (featstore.Tiered.Stats) before closing the trainer.
func NewTiered(be backend.Backend, ds *dataset.Dataset, cfg Config, size CacheSizer) (*Trainer, *featstore.Tiered, error) {
	return NewSharedTiered(be, ds, cfg, nil, size)
}

// NewSharedTiered is NewTiered for one rank of a data-parallel group
// (NewShared): every rank holds a tiered store of its own, sized on its
// own device.
func NewSharedTiered(be backend.Backend, ds *dataset.Dataset, cfg Config, group backend.Collective, size CacheSizer) (*Trainer, *featstore.Tiered, error) {
	// A link step's ends are drawn from the training edges, so a vertex is
	// an end, and a sampled neighbour, in proportion to its degree (uniform
	// negatives aside): the cache takes the highest-degree vertices' rows.
	store, err := featstore.NewTiered(be, ds.FeatureTable(), ds.FeatDim, graph.DegreeOrder(ds.Graph), cfg.Features)
	if err != nil {
		return nil, nil, err
	}
	t, err := newTrainer(be, ds, cfg, group, store)
	if err != nil {
		return nil, nil, err
	}
	rowBytes := int64(store.Dim()) * int64(store.DType().Size())
	rows, err := size(backend.MemoryOf(be).InUseBytes(), rowBytes, store.Rows())
	if err == nil {
		err = store.Fill(int(rows))
	}
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	return t, store, nil
}
