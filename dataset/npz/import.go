package npz

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/graph"
)

// maxDenseElems bounds the dense feature matrix Import builds from a sparse
// one (2^34 float32 values, 64 GiB): the shape is read from the file, so a
// corrupt shape must not be able to ask for unbounded memory.
const maxDenseElems = int64(1) << 34

// Import reads a gnn-benchmark style .npz graph, in either of two key
// layouts: adj_data/adj_indices/adj_indptr/adj_shape (Shchur et al.), or
// adj_matrix.data/.indices/.indptr/.shape (the flat dict of scipy matrices of
// the citation and co-purchase archives that followed). The adjacency is
// symmetrized, self loops and duplicate edges are dropped (stored zeros are
// not edges). Features come from a sparse matrix under attr_* (or feature_*,
// or attr_matrix.*) or from the dense attr_matrix. Labels come from labels
// ([N] class ids or [N, C] one-hot rows), from labels with label_indices
// (labels[i] is the class of vertex label_indices[i]), or from sparse
// one-hot rows under labels_* (or label_*, or labels.*); vertices without a
// label are -1. Where the archive has class_names, the classes are those
// it names, and a label beyond them is an error. The split is dataset.Split(labels, ...) under opt. Every member read
// has its CRC checked.
func Import(file string, opt dataset.SplitOptions) (*dataset.Dataset, error) {
	a, err := Open(file)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	d, err := importArchive(a, opt, maxDenseElems)
	if err != nil {
		return nil, err
	}
	d.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	d.Symmetric = true
	d.Preprocessing = dataset.GraphSteps(graphOptions())
	d.Source = fmt.Sprintf("npz %s (%s)", filepath.Base(file), opt)
	return d, nil
}

// importArchive builds the dataset; maxElems bounds the feature matrix.
func importArchive(a *Archive, opt dataset.SplitOptions, maxElems int64) (*dataset.Dataset, error) {
	layouts := []csrKeys{{"adj", "_"}, {"adj_matrix", "."}}
	k, ok := findCSR(a, layouts...)
	if !ok {
		return nil, fmt.Errorf("%s: no adjacency matrix: want %s or %s; the archive holds %s",
			a.name, layouts[0].names(), layouts[1].names(), a.keyList())
	}
	adj, err := readCSR(a, k, false)
	if err != nil {
		return nil, err
	}
	if adj.rows != adj.cols {
		return nil, fmt.Errorf("%s: adjacency shape is (%d, %d), want a square matrix", a.name, adj.rows, adj.cols)
	}
	n := adj.rows
	if n >= graph.MaxInt32Vertices {
		return nil, fmt.Errorf("%s: %d vertices: too many for the importer (limit 2^31-1)", a.name, n)
	}
	g, err := buildGraph(adj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	feat, dim, err := readFeatures(a, n, maxElems)
	if err != nil {
		return nil, err
	}
	labels, classes, err := readLabels(a, n)
	if err != nil {
		return nil, err
	}
	if classes, err = namedClasses(a, labels, classes); err != nil {
		return nil, err
	}
	train, valid, test, err := dataset.Split(labels, classes, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	return &dataset.Dataset{
		Graph: g, Features: feat, FeatDim: dim, Labels: labels, NumClasses: classes,
		Train: train, Valid: valid, Test: test,
	}, nil
}

// graphOptions is how the graph is built (and what the manifest records).
func graphOptions() graph.BuildOptions {
	return graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true}
}

// buildGraph turns the stored (non-zero) entries of adj into a symmetric CSR
// graph without self loops or duplicates.
func buildGraph(adj *csrMatrix) (*graph.CSR, error) {
	src := make([]int32, 0, len(adj.indices))
	dst := make([]int32, 0, len(adj.indices))
	for i := int64(0); i < adj.rows; i++ {
		for k := adj.indptr[i]; k < adj.indptr[i+1]; k++ {
			if adj.data != nil && adj.data[k] == 0 {
				continue
			}
			src = append(src, int32(i))
			dst = append(dst, int32(adj.indices[k]))
		}
	}
	return graph.FromEdges(adj.rows, src, dst, graphOptions())
}

// readFeatures returns the [n, dim] float32 feature matrix.
func readFeatures(a *Archive, n, maxElems int64) ([]float32, int, error) {
	if k, ok := findCSR(a, csrKeys{"attr", "_"}, csrKeys{"feature", "_"}, csrKeys{"attr_matrix", "."}); ok {
		return sparseFeatures(a, k, n, maxElems)
	}
	if !a.Has("attr_matrix") {
		return nil, 0, fmt.Errorf("%s: no node features (want attr_data/attr_indices/attr_indptr/attr_shape, feature_*, attr_matrix.* or a dense attr_matrix)", a.name)
	}
	raw, shape, err := a.Read("attr_matrix")
	if err != nil {
		return nil, 0, err
	}
	if len(shape) != 2 || shape[0] != n || shape[1] == 0 {
		return nil, 0, fmt.Errorf("%s: attr_matrix has shape %s, want (%d, dim >= 1)", a.name, npy.ShapeString(shape), n)
	}
	feat, err := npy.Float32s(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: attr_matrix: %w", a.name, err)
	}
	if err := dataset.CheckFeatures(feat, int(shape[1])); err != nil {
		return nil, 0, fmt.Errorf("%s: attr_matrix: %w", a.name, err)
	}
	return feat, int(shape[1]), nil
}

// sparseFeatures expands the CSR feature matrix stored under k.
func sparseFeatures(a *Archive, k csrKeys, n, maxElems int64) ([]float32, int, error) {
	m, err := readCSR(a, k, true)
	if err != nil {
		return nil, 0, err
	}
	if m.rows != n {
		return nil, 0, fmt.Errorf("%s: %s has %d rows but the graph has %d vertices", a.name, k.key("shape"), m.rows, n)
	}
	if m.cols == 0 {
		return nil, 0, fmt.Errorf("%s: %s has no feature columns", a.name, k.key("shape"))
	}
	if m.rows > maxElems/m.cols {
		return nil, 0, fmt.Errorf("%s: %s (%d, %d) is too large to hold densely", a.name, k.key("shape"), m.rows, m.cols)
	}
	feat := make([]float32, m.rows*m.cols)
	for i := int64(0); i < m.rows; i++ {
		for e := m.indptr[i]; e < m.indptr[i+1]; e++ {
			feat[i*m.cols+m.indices[e]] += float32(m.data[e])
		}
	}
	if err := dataset.CheckFeatures(feat, int(m.cols)); err != nil {
		return nil, 0, fmt.Errorf("%s: %s: %w", a.name, k, err)
	}
	return feat, int(m.cols), nil
}

// readLabels returns one class id per vertex and the class count.
func readLabels(a *Archive, n int64) ([]int32, int, error) {
	switch {
	case a.Has("labels") && a.Has("label_indices"):
		return indexedLabels(a, n)
	case a.Has("labels"):
		return denseLabels(a, n)
	}
	if k, ok := findCSR(a, csrKeys{"labels", "_"}, csrKeys{"label", "_"}, csrKeys{"labels", "."}); ok {
		m, err := readCSR(a, k, false)
		if err != nil {
			return nil, 0, err
		}
		if m.rows != n {
			return nil, 0, fmt.Errorf("%s: %s has %d rows but the graph has %d vertices", a.name, k.key("shape"), m.rows, n)
		}
		return oneHotSparse(a.name, m)
	}
	return nil, 0, fmt.Errorf("%s: no labels (want labels, labels + label_indices, or labels_data/labels_indices/labels_indptr/labels_shape)", a.name)
}

// denseLabels reads labels: [n] class ids ([n, 1] too) or [n, classes]
// one-hot rows.
func denseLabels(a *Archive, n int64) ([]int32, int, error) {
	raw, shape, err := a.Read("labels")
	if err != nil {
		return nil, 0, err
	}
	if len(shape) == 2 && shape[0] == n && shape[1] == 1 {
		shape = shape[:1] // a column of class ids
	}
	if len(shape) == 2 && shape[0] == n {
		if shape[1] > dataset.MaxClasses {
			return nil, 0, fmt.Errorf("%s: labels has %d columns (at most %d classes are supported)", a.name, shape[1], dataset.MaxClasses)
		}
		return oneHotDense(a.name, "labels", raw, n, shape[1])
	}
	if len(shape) != 1 || shape[0] != n {
		return nil, 0, fmt.Errorf("%s: labels has shape %s, want (%d,) or (%d, classes)", a.name, npy.ShapeString(shape), n, n)
	}
	ids, err := npy.Int64s(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: labels: %w", a.name, err)
	}
	return classIDs(a.name, ids)
}

// indexedLabels reads labels[i], the class of vertex label_indices[i]; the
// other vertices are unlabelled.
func indexedLabels(a *Archive, n int64) ([]int32, int, error) {
	raw, _, err := a.Read("labels")
	if err != nil {
		return nil, 0, err
	}
	vals, err := npy.Int64s(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: labels: %w", a.name, err)
	}
	idx, err := readInts(a, "label_indices")
	if err != nil {
		return nil, 0, err
	}
	if len(idx) != len(vals) {
		return nil, 0, fmt.Errorf("%s: %d labels but %d label_indices", a.name, len(vals), len(idx))
	}
	ids, classes, err := classIDs(a.name, vals)
	if err != nil {
		return nil, 0, err
	}
	labels := make([]int32, n)
	for v := range labels {
		labels[v] = -1
	}
	for i, v := range idx {
		if v < 0 || v >= n {
			return nil, 0, fmt.Errorf("%s: label_indices[%d] = %d is out of range [0, %d)", a.name, i, v, n)
		}
		if labels[v] >= 0 {
			return nil, 0, fmt.Errorf("%s: label_indices[%d]: vertex %d is labelled twice", a.name, i, v)
		}
		labels[v] = ids[i]
	}
	return labels, classes, nil
}

// classIDs checks that ids are class numbers below 2^31 and counts classes.
func classIDs(name string, ids []int64) ([]int32, int, error) {
	labels := make([]int32, len(ids))
	classes := 0
	for i, c := range ids {
		if c < 0 || c >= dataset.MaxClasses {
			return nil, 0, fmt.Errorf("%s: labels[%d] = %d is out of range [0, %d)", name, i, c, dataset.MaxClasses)
		}
		labels[i] = int32(c)
		classes = max(classes, int(c)+1)
	}
	return labels, classes, nil
}

// oneHotDense decodes [n, classes] one-hot rows; an all-zero row is
// unlabelled (-1).
func oneHotDense(name, key string, raw any, n, classes int64) ([]int32, int, error) {
	vals, err := npy.Float64s(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %s: %w", name, key, err)
	}
	labels := make([]int32, n)
	for i := int64(0); i < n; i++ {
		labels[i] = -1
		for c := int64(0); c < classes; c++ {
			switch v := vals[i*classes+c]; {
			case v == 0:
			case v == 1 && labels[i] < 0:
				labels[i] = int32(c)
			default:
				return nil, 0, fmt.Errorf("%s: %s row %d is not one-hot (multi-label data is not supported)", name, key, i)
			}
		}
	}
	return labels, int(classes), nil
}

// oneHotSparse decodes sparse one-hot label rows; an empty row is unlabelled.
func oneHotSparse(name string, m *csrMatrix) ([]int32, int, error) {
	if m.cols > dataset.MaxClasses {
		return nil, 0, fmt.Errorf("%s: label_shape has %d classes (at most %d are supported)", name, m.cols, dataset.MaxClasses)
	}
	labels := make([]int32, m.rows)
	for i := int64(0); i < m.rows; i++ {
		labels[i] = -1
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			if m.data != nil && m.data[k] == 0 {
				continue
			}
			if labels[i] >= 0 {
				return nil, 0, fmt.Errorf("%s: label row %d has several classes (multi-label data is not supported)", name, i)
			}
			labels[i] = int32(m.indices[k])
		}
	}
	return labels, int(m.cols), nil
}
