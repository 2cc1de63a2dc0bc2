// Package dataset is fanout's on-disk dataset: a directory holding a YAML
// manifest and .npy arrays (indptr, indices, feat, label, train_idx,
// valid_idx, test_idx), memory-mapped on open, and a writer that never leaves
// a half-written dataset behind.
package dataset

import (
	"errors"

	"github.com/fanout-gnn/fanout/graph"
)

// Dataset is a graph with node features, labels and a train/valid/test split.
// Slices may be memory-mapped: treat them as read-only and call Close when done.
//
// A typed dataset (Typed) has vertex types and relations instead of one
// graph: Types, Relations and Target are set, Graph, Features and
// FeaturesBF16 are nil, FeatDim is the target type's, Labels is
// [Types[Target].Count] and Train, Valid and Test are target-local ids
// (typed.go).
type Dataset struct {
	Name       string
	Graph      *graph.CSR
	Features   []float32 // [Graph.NumNodes, FeatDim] row-major; nil when FeaturesBF16 holds them
	FeatDim    int
	Labels     []int32 // [Graph.NumNodes]; -1 marks an unlabelled vertex
	NumClasses int
	Train      []int64 // vertex ids
	Valid      []int64
	Test       []int64

	// FeaturesBF16 holds the features as bfloat16 bit patterns instead of
	// Features ([Graph.NumNodes, FeatDim] row-major, dtype.BF16Bits of the
	// float32 values), half the bytes; nil for float32 features. One of
	// the two is set (FeatureDType, FeatureTable: features.go).
	FeaturesBF16 []uint16
	// FeatureFile, set instead of both by OpenWith's FeaturesOnDisk, reads
	// the rows from feat.npy where they lie (featfile.go).
	FeatureFile *FeatureFile

	// Symmetric is declared by whoever built the graph: every edge u->v has
	// its reverse v->u. It is recorded in the manifest, and Validate checks it.
	Symmetric bool
	// Source says where the data came from, free text ("rmat tiny seed 1").
	Source string
	// Preprocessing lists the transforms applied to the source data, in
	// order (Step* names, or free text).
	Preprocessing []string
	// IDs, when set, are the vertices' original ids (ids.go), written
	// beside the arrays. Open leaves it nil: ReadIDs reads them.
	IDs *NodeIDs
	// Link, when set, is a link-prediction task's edge sets (link.go).
	Link *LinkSplit

	// Types are a typed dataset's vertex types, Relations its edge types
	// (typed.go); both nil for a dataset of one vertex type.
	Types     []VertexType
	Relations []Relation
	// Target is the index in Types of the labelled type, whose vertices
	// Labels and the splits hold (0 for a dataset of one type).
	Target int

	idsFile string         // an opened dataset's node_ids: the file of its original ids
	closers []func() error // unmap functions of an opened dataset
}

// Close releases the memory mappings of an opened dataset; afterwards its
// array fields are nil. A dataset built in memory has nothing to release.
// Close may be called more than once.
func (d *Dataset) Close() error {
	if len(d.closers) == 0 {
		return nil
	}
	var errs []error
	for _, c := range d.closers {
		errs = append(errs, c())
	}
	d.closers = nil
	d.Features, d.FeaturesBF16, d.Labels, d.Train, d.Valid, d.Test = nil, nil, nil, nil, nil, nil
	d.Link, d.FeatureFile = nil, nil
	if d.Graph != nil {
		d.Graph.Indptr, d.Graph.Indices, d.Graph.Indices64 = nil, nil, nil
	}
	for i := range d.Types {
		d.Types[i].Features, d.Types[i].FeaturesBF16, d.Types[i].FeatureFile = nil, nil, nil
	}
	for _, r := range d.Relations {
		if r.Graph != nil {
			r.Graph.Indptr, r.Graph.Indices, r.Graph.Indices64 = nil, nil, nil
		}
	}
	return errors.Join(errs...)
}
