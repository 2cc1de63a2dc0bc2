package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/nn"
)

// TypedInputs are a typed dataset's tables on the backend: every
// relation's adjacency, every type's vertex space (the map that relabels
// its sampled vertices) and its input rows, from its features or from a
// learned embedding table.
type TypedInputs struct {
	Rels  []backend.Graph // per relation: rows are the destination type's vertices
	Space []backend.Graph // per type: its vertices without edges (relabelling's map)
	// Feat serves a type's feature rows; nil for a featureless type,
	// whose rows are Embed's.
	Feat []featstore.Store
	// Embed is a featureless type's learned table [Count, dim], trained
	// on the rows each step reads (backend.SparseAdam); nil for a type
	// with features.
	Embed []*nn.Param
}

// InDims are the widths of the types' input rows.
func (ti *TypedInputs) InDims() []int {
	d := make([]int, len(ti.Feat))
	for t := range d {
		if ti.Feat[t] != nil {
			d[t] = ti.Feat[t].Dim()
		} else {
			d[t] = ti.Embed[t].Shape[1]
		}
	}
	return d
}

// Tables are the learned embedding tables (nil entries left out).
func (ti *TypedInputs) Tables() []*nn.Param {
	var ps []*nn.Param
	for _, p := range ti.Embed {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// EmbedDim is the width of the learned rows of a typed dataset's
// featureless types: want when set, else the target type's feature width
// (ogbn-mag's examples embed authors, institutions and fields as wide as
// papers' features), else 64.
func EmbedDim(ds *dataset.Dataset, want int) int {
	if want > 0 {
		return want
	}
	if ds.Typed() && ds.Types[ds.Target].FeatDim > 0 {
		return ds.Types[ds.Target].FeatDim
	}
	return 64
}

// uploadTyped makes a typed dataset resident: relations, vertex spaces,
// the target's labels, feature tables (held as dt; 0: as the dataset holds
// them) and, for featureless types, embedding tables of width embedDim
// initialised from seed. stores, when set, serve the types whose entry is
// not nil instead of an uploaded table (Options.TypedFeatures); the
// inputs then own them.
func uploadTyped(be backend.Backend, ds *dataset.Dataset, stores []featstore.Store, dt backend.DType, embedDim int, seed uint64) (_ *Inputs, err error) {
	if err := checkTypedStores(ds, stores); err != nil {
		return nil, err
	}
	ti := &TypedInputs{}
	in := &Inputs{Typed: ti}
	defer func() {
		if err != nil {
			in.Free(be)
		}
	}()
	for _, r := range ds.Relations {
		if err := r.Graph.Narrow(); err != nil {
			return nil, fmt.Errorf("relation %s: %w", ds.RelationName(r), err)
		}
		g, err := be.UploadGraph(r.Graph)
		if err != nil {
			return nil, fmt.Errorf("upload relation %s: %w", ds.RelationName(r), err)
		}
		ti.Rels = append(ti.Rels, g)
	}
	for i, vt := range ds.Types {
		space, err := be.UploadGraph(&graph.CSR{NumNodes: vt.Count, Indptr: make([]int64, vt.Count+1)})
		if err != nil {
			return nil, fmt.Errorf("upload type %s: %w", vt.Name, err)
		}
		ti.Space = append(ti.Space, space)
		var f featstore.Store
		var emb *nn.Param
		if i < len(stores) && stores[i] != nil {
			f = stores[i]
		} else if vt.FeatDim > 0 {
			r, err := featstore.UploadAs(be, vt.FeatureTable(), vt.FeatDim, dt)
			if err != nil {
				return nil, fmt.Errorf("type %s features: %w", vt.Name, err)
			}
			f = r
		} else if emb, err = nn.NewTable(be, "embed."+vt.Name, int(vt.Count), embedDim, seed, i); err != nil {
			return nil, err
		}
		ti.Feat, ti.Embed = append(ti.Feat, f), append(ti.Embed, emb)
	}
	if in.Labels, err = be.Upload(ds.Labels); err != nil {
		return nil, fmt.Errorf("upload labels: %w", err)
	}
	in.owned = append(in.owned, in.Labels)
	return in, nil
}

// checkTypedStores checks the per-type stores given to the trainer: one
// entry per type, nil for a featureless type, and each store as many rows
// as its type has vertices, as wide as its features.
func checkTypedStores(ds *dataset.Dataset, stores []featstore.Store) error {
	if stores == nil {
		return nil
	}
	if len(stores) != len(ds.Types) {
		return fmt.Errorf("train: %d per-type feature stores, %s has %d vertex types", len(stores), ds.Name, len(ds.Types))
	}
	for i, f := range stores {
		vt := ds.Types[i]
		switch {
		case f == nil:
		case vt.FeatDim == 0:
			return fmt.Errorf("train: a feature store for type %s, which has no features (its rows are learned)", vt.Name)
		case f.Rows() != vt.Count || f.Dim() != vt.FeatDim:
			return fmt.Errorf("train: type %s's feature store has %d x %d rows, the type has %d x %d", vt.Name, f.Rows(), f.Dim(), vt.Count, vt.FeatDim)
		}
	}
	return nil
}

// free releases the typed tables.
func (ti *TypedInputs) free(be backend.Backend) {
	for _, g := range append(append([]backend.Graph(nil), ti.Rels...), ti.Space...) {
		backend.FreeGraph(be, g)
	}
	for _, f := range ti.Feat {
		if f != nil {
			f.Free()
		}
	}
	for _, p := range ti.Embed {
		nn.FreeTable(be, p)
	}
	*ti = TypedInputs{}
}
