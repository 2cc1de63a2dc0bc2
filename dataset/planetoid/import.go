// Package planetoid imports the Planetoid citation datasets (Cora, CiteSeer,
// PubMed; Yang, Cohen and Salakhutdinov, ICML 2016) from their original
// files ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}: Python 2 pickles
// of scipy.sparse CSR matrices, one-hot numpy arrays and a dict of
// neighbour lists, decoded by a small pickle reader that executes nothing.
// It reproduces the standard split of the reference loader (Kipf and
// Welling's GCN): train = the first len(y) vertices, validation = the next
// 500, test = the vertices listed in test.index.
package planetoid

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/internal/pickle"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// NumValid is the size of the standard validation split.
const NumValid = 500

// maxDenseElems bounds a dense feature matrix built from a pickled shape
// (2^32 float32 values, 16 GiB) so that a corrupt shape cannot ask for
// unbounded memory.
const maxDenseElems = int64(1) << 32

// files holds the decoded contents of the eight files.
type files struct {
	x, tx, allx *matrix // features
	y, ty, ally *matrix // one-hot labels
	src, dst    []int64 // graph: edge (src[i], dst[i]) per neighbour list entry
	testIndex   []int64 // test.index, file order
	maxElems    int64   // bound on the dense feature matrix
}

// Import reads ind.<name>.* from dir. The graph is symmetrized and loses its
// self loops and duplicate edges. As in the reference loader, the rows of
// tx/ty belong to the vertices of test.index in file order; vertices between
// the smallest and largest test id that test.index does not list (CiteSeer
// has 15) get zero features and no label (-1) and are in no split. A vertex
// whose label row is all zero is unlabelled (-1).
func Import(dir, name string) (*dataset.Dataset, error) {
	f, err := readFiles(dir, name, maxDenseElems)
	if err != nil {
		return nil, err
	}
	d, err := assemble(f, func(ext string) string { return filepath.Join(dir, "ind."+name+"."+ext) })
	if err != nil {
		return nil, err
	}
	d.Name = name
	d.Symmetric = true
	d.Preprocessing = dataset.GraphSteps(graphOptions())
	d.Source = "planetoid " + name + " (standard split)"
	return d, nil
}

// readFiles reads and decodes the eight files.
func readFiles(dir, name string, maxElems int64) (*files, error) {
	f := &files{maxElems: maxElems}
	path := func(ext string) string { return filepath.Join(dir, "ind."+name+"."+ext) }
	for _, m := range []struct {
		ext string
		dst **matrix
	}{{"x", &f.x}, {"y", &f.y}, {"tx", &f.tx}, {"ty", &f.ty}, {"allx", &f.allx}, {"ally", &f.ally}} {
		v, err := loadPickle(path(m.ext))
		if err != nil {
			return nil, err
		}
		if *m.dst, err = asMatrix(v, maxElems); err != nil {
			return nil, fmt.Errorf("%s: %w", path(m.ext), err)
		}
	}
	v, err := loadPickle(path("graph"))
	if err != nil {
		return nil, err
	}
	if f.src, f.dst, err = asAdjacency(v); err != nil {
		return nil, fmt.Errorf("%s: %w", path("graph"), err)
	}
	raw, err := os.ReadFile(path("test.index"))
	if err != nil {
		return nil, err
	}
	if f.testIndex, err = parseIndex(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path("test.index"), err)
	}
	return f, nil
}

// loadPickle reads and decodes one pickle file.
func loadPickle(path string) (any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := pickle.Decode(raw, pickle.Hooks{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// parseIndex parses one non-negative integer per line.
func parseIndex(raw []byte) ([]int64, error) {
	var ids []int64
	for no, line := range bytes.Split(raw, []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		v, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("line %d: %s is not a vertex id", no+1, quote.Quote(string(line)))
		}
		ids = append(ids, v)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no test vertices")
	}
	return ids, nil
}

// assemble places the rows as the reference loader does and builds the
// dataset; path names a file for messages.
func assemble(f *files, path func(ext string) string) (*dataset.Dataset, error) {
	if err := checkShapes(f, path); err != nil {
		return nil, err
	}
	sorted := slices.Clone(f.testIndex)
	slices.Sort(sorted)
	lo, hi := sorted[0], sorted[len(sorted)-1]
	if lo != f.allx.rows {
		return nil, fmt.Errorf("%s: the smallest test id is %d, want %d (the rows of allx)", path("test.index"), lo, f.allx.rows)
	}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fmt.Errorf("%s: vertex %d is listed twice", path("test.index"), sorted[i])
		}
	}
	if hi >= graph.MaxInt32Vertices || hi+1 > f.maxElems/max(f.allx.cols, 1) {
		return nil, fmt.Errorf("%s: test id %d is too large", path("test.index"), hi)
	}
	n := hi + 1
	dim, classes := f.allx.cols, f.ally.cols
	feat := make([]float32, n*dim)
	copy(feat, f.allx.data)
	labels := make([]int32, n)
	for v := range labels {
		labels[v] = -1
	}
	if err := setLabels(labels[:f.ally.rows], f.ally, path("ally")); err != nil {
		return nil, err
	}
	for i, v := range f.testIndex { // row i of tx/ty belongs to vertex test.index[i]
		copy(feat[v*dim:(v+1)*dim], f.tx.data[int64(i)*dim:int64(i+1)*dim])
		if err := setLabels(labels[v:v+1], &matrix{rows: 1, cols: classes, data: f.ty.data[int64(i)*classes : int64(i+1)*classes]}, path("ty")); err != nil {
			return nil, err
		}
	}
	g, err := buildGraph(n, f.src, f.dst, path("graph"))
	if err != nil {
		return nil, err
	}
	d := &dataset.Dataset{Graph: g, Features: feat, FeatDim: int(dim), Labels: labels, NumClasses: int(classes)}
	d.Train = iota64(0, f.y.rows)
	d.Valid = iota64(f.y.rows, f.y.rows+NumValid)
	d.Test = sorted
	for _, split := range [][]int64{d.Train, d.Valid, d.Test} {
		for _, v := range split {
			if labels[v] < 0 {
				return nil, fmt.Errorf("%s: vertex %d of the standard split has no label", path("ally"), v)
			}
		}
	}
	return d, nil
}

// checkShapes checks that the six matrices agree with each other and with
// test.index.
func checkShapes(f *files, path func(ext string) string) error {
	dim, classes := f.allx.cols, f.ally.cols
	switch {
	case f.x.cols != dim || f.tx.cols != dim:
		return fmt.Errorf("%s: feature widths differ: x %d, tx %d, allx %d", path("allx"), f.x.cols, f.tx.cols, dim)
	case f.y.cols != classes || f.ty.cols != classes:
		return fmt.Errorf("%s: class counts differ: y %d, ty %d, ally %d", path("ally"), f.y.cols, f.ty.cols, classes)
	case f.ally.rows != f.allx.rows:
		return fmt.Errorf("%s: %d rows, but allx has %d", path("ally"), f.ally.rows, f.allx.rows)
	case f.x.rows != f.y.rows:
		return fmt.Errorf("%s: %d rows, but y has %d", path("x"), f.x.rows, f.y.rows)
	case f.tx.rows != int64(len(f.testIndex)) || f.ty.rows != int64(len(f.testIndex)):
		return fmt.Errorf("%s: %d test ids, but tx has %d rows and ty %d", path("test.index"), len(f.testIndex), f.tx.rows, f.ty.rows)
	case f.y.rows == 0 || f.y.rows+NumValid > f.ally.rows:
		return fmt.Errorf("%s: %d training rows plus %d validation rows exceed the %d rows of ally", path("y"), f.y.rows, NumValid, f.ally.rows)
	case dim == 0:
		return fmt.Errorf("%s: no feature columns", path("allx"))
	case classes == 0 || classes > dataset.MaxClasses:
		return fmt.Errorf("%s: %d classes", path("ally"), classes)
	}
	return nil
}

// setLabels decodes one-hot rows of m into labels (-1 for an all-zero row).
func setLabels(labels []int32, m *matrix, file string) error {
	for r := range labels {
		labels[r] = -1
		for c := int64(0); c < m.cols; c++ {
			switch v := m.data[int64(r)*m.cols+c]; {
			case v == 0:
			case v == 1 && labels[r] < 0:
				labels[r] = int32(c)
			default:
				return fmt.Errorf("%s: label row %d is not one-hot (value %v in column %d)", file, r, v, c)
			}
		}
	}
	return nil
}

// graphOptions is how the graph is built (and what the manifest records).
func graphOptions() graph.BuildOptions {
	return graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true}
}

// buildGraph checks the ids and builds the symmetric graph.
func buildGraph(n int64, src, dst []int64, file string) (*graph.CSR, error) {
	s, d := make([]int32, len(src)), make([]int32, len(dst))
	for i := range src {
		if src[i] < 0 || src[i] >= n || dst[i] < 0 || dst[i] >= n {
			return nil, fmt.Errorf("%s: edge (%d, %d) has a vertex outside [0, %d)", file, src[i], dst[i], n)
		}
		s[i], d[i] = int32(src[i]), int32(dst[i])
	}
	g, err := graph.FromEdges(n, s, d, graphOptions())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return g, nil
}

// iota64 returns lo, lo+1, ..., hi-1.
func iota64(lo, hi int64) []int64 {
	out := make([]int64, 0, hi-lo)
	for v := lo; v < hi; v++ {
		out = append(out, v)
	}
	return out
}
