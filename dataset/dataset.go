// Package dataset is fanout's on-disk dataset: a directory holding a YAML
// manifest and .npy arrays (indptr, indices, feat, label, train_idx,
// valid_idx, test_idx), memory-mapped on open, and a writer that never leaves
// a half-written dataset behind.
package dataset

import "github.com/fanout-gnn/fanout/graph"

// Dataset is a graph with node features, labels and a train/valid/test split.
// Slices may be memory-mapped: treat them as read-only and call Close when done.
type Dataset struct {
	Name       string
	Graph      *graph.CSR
	Features   []float32 // [Graph.NumNodes, FeatDim] row-major
	FeatDim    int
	Labels     []int32 // [Graph.NumNodes]; -1 marks an unlabelled vertex
	NumClasses int
	Train      []int64 // vertex ids
	Valid      []int64
	Test       []int64

	closers []func() error
}
