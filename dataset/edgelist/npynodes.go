package edgelist

import (
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// isNPY reports whether the node table is a .npy feature matrix.
func isNPY(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".npy") }

// readNPYNodes reads nodes given as arrays in id order: s.file holds the
// features ([n, dim] or [n], any numeric dtype) and s.label is a .npy file
// of n class ids (-1 unlabelled; none for a typed import's type other than
// the target). Vertex v is the edges' integer id v.
func readNPYNodes(s tableSpec) (*nodes, error) {
	if s.split != "" || (s.features != nil && !s.some) {
		return nil, fmt.Errorf("%s: .npy features have no columns to name (--split, --features): the split is drawn", s.file)
	}
	if s.label != "" && !isNPY(s.label) {
		return nil, fmt.Errorf("%s: with .npy features, --label names a .npy file of class ids in id order, not %s", s.file, quote.Quote(s.label))
	}
	data, shape, err := npy.ReadFile(s.file)
	if err != nil {
		return nil, err
	}
	if len(shape) < 1 || len(shape) > 2 || shape[0] == 0 || (len(shape) == 2 && shape[1] == 0) {
		return nil, fmt.Errorf("%s: shape %s, want [vertices, features] or [vertices]", s.file, npy.ShapeString(shape))
	}
	nd := &nodes{ids: &idMap{identity: shape[0]}, dim: 1}
	if len(shape) == 2 {
		nd.dim = int(shape[1])
	}
	if nd.feat, err = npy.Float32s(data); err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	if err := dataset.CheckFeatures(nd.feat, nd.dim); err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	if s.label == "" {
		return nd, nil
	}
	if nd.labels, nd.classes, err = npyLabels(s.label, shape[0]); err != nil {
		return nil, err
	}
	return nd, nil
}

// npyLabels reads n class ids from a .npy file.
func npyLabels(path string, n int64) ([]int32, int, error) {
	data, shape, err := npy.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(shape) != 1 || shape[0] != n {
		return nil, 0, fmt.Errorf("%s: shape %s, want [%d], a class id per vertex", path, npy.ShapeString(shape), n)
	}
	ints, err := npy.Int64s(data)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	labels := make([]int32, n)
	classes := 0
	for v, c := range ints {
		if c < -1 || c >= maxClasses {
			return nil, 0, fmt.Errorf("%s: element %d: label %d is outside [0, %d) (-1: unlabelled)", path, v, c, maxClasses)
		}
		labels[v] = int32(c)
		classes = max(classes, int(c)+1)
	}
	if classes == 0 {
		return nil, 0, fmt.Errorf("%s: every vertex is unlabelled", path)
	}
	return labels, classes, nil
}
