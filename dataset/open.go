package dataset

import (
	"fmt"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/graph"
)

// Open opens the dataset directory dir: it reads manifest.yaml, memory-maps
// the arrays, checks their dtypes and shapes against the manifest and runs
// Validate. feat.npy holds float32 features, or bfloat16 bit patterns
// (Dataset.FeaturesBF16) where the manifest says feature_dtype: bfloat16;
// either is mapped as it is. Arrays stored with a wider or narrower
// integer type than the in-memory one (int64 labels, int32 split ids, ...)
// are converted, which copies them. The caller must Close the dataset.
func Open(dir string) (_ *Dataset, err error) {
	m, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: m.Name, Source: m.Source, Symmetric: m.Symmetric, FeatDim: m.FeatDim, NumClasses: m.NumClasses,
		Preprocessing: m.Preprocessing, idsFile: m.NodeIDs}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	l := loader{dir: dir, d: d}
	g := &graph.CSR{NumNodes: m.NumNodes}
	d.Graph = g
	if g.Indptr, err = loadInt[int64](l, IndptrFile, m.NumNodes+1, "num_nodes+1"); err != nil {
		return nil, err
	}
	if m.NumNodes >= graph.MaxInt32Vertices {
		g.Indices64, err = loadInt[int64](l, IndicesFile, m.NumEdges, "num_edges")
	} else {
		g.Indices, err = loadInt[int32](l, IndicesFile, m.NumEdges, "num_edges")
	}
	if err != nil {
		return nil, err
	}
	if err = loadFeat(l, m); err != nil {
		return nil, err
	}
	if d.Labels, err = loadInt[int32](l, LabelFile, m.NumNodes, "num_nodes"); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		file  string
		n     int64
		field string
		dst   *[]int64
	}{
		{TrainFile, m.NumTrain, "num_train", &d.Train},
		{ValidFile, m.NumValid, "num_valid", &d.Valid},
		{TestFile, m.NumTest, "num_test", &d.Test},
	} {
		if *s.dst, err = loadInt[int64](l, s.file, s.n, s.field); err != nil {
			return nil, err
		}
	}
	if err = loadLink(l, m); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		if fe, ok := err.(*FileError); ok {
			return nil, &FileError{File: l.path(fe.File), Err: fe.Err}
		}
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return d, nil
}

// loader maps the arrays of one dataset directory, keeping their closers.
type loader struct {
	dir string
	d   *Dataset
}

// load maps one file and records its closer in the dataset.
func (l loader) load(file string) (any, []int64, error) {
	data, shape, closer, err := npy.Map(filepath.Join(l.dir, file))
	if err != nil {
		return nil, nil, err
	}
	l.d.closers = append(l.d.closers, closer)
	return data, shape, nil
}

// path is the full name of a dataset file, for messages.
func (l loader) path(file string) string { return filepath.Join(l.dir, file) }

// loadInt maps a 1-D integer array of n elements (n from the manifest field
// named field) and returns it as []T, converting int32 <-> int64 if needed.
func loadInt[T int32 | int64](l loader, file string, n int64, field string) ([]T, error) {
	data, shape, err := l.load(file)
	if err != nil {
		return nil, err
	}
	if len(shape) != 1 || shape[0] != n {
		return nil, fmt.Errorf("%s: shape %s, but %s says %s = %d", l.path(file), shapeText(shape), ManifestFile, field, n)
	}
	switch s := data.(type) {
	case []T:
		return s, nil
	case []int32:
		return convertInt[T](s, l.path(file))
	case []int64:
		return convertInt[T](s, l.path(file))
	}
	descr, _ := npy.Descr(data)
	return nil, fmt.Errorf("%s: dtype %s, want int32/int64", l.path(file), descr)
}

// convertInt copies src into a new []T, failing on values T cannot hold.
func convertInt[T int32 | int64, S int32 | int64](src []S, path string) ([]T, error) {
	out := make([]T, len(src))
	for i, v := range src {
		if int64(T(v)) != int64(v) {
			return nil, fmt.Errorf("%s: element %d = %d does not fit in int32", path, i, v)
		}
		out[i] = T(v)
	}
	return out, nil
}

// loadFeat maps feat.npy, [num_nodes, feat_dim] of the manifest's
// feature_dtype: float32 (<f4), or bfloat16 bit patterns (<u2), into d.
func loadFeat(l loader, m Manifest) error {
	data, shape, err := l.load(FeatFile)
	if err != nil {
		return err
	}
	descr, _ := npy.Descr(data)
	bf16 := m.FeatureDType == DTypeBFloat16
	switch f := data.(type) {
	case []float32:
		if bf16 {
			return fmt.Errorf("%s: dtype %s, but %s says feature_dtype: bfloat16, which feat.npy stores as <u2 (bfloat16 bit patterns)", l.path(FeatFile), descr, ManifestFile)
		}
		l.d.Features = f
	case []uint16:
		if !bf16 {
			return fmt.Errorf("%s: dtype %s, but %s has no feature_dtype: bfloat16 (add it if the file holds bfloat16 bit patterns; float32 features are <f4)", l.path(FeatFile), descr, ManifestFile)
		}
		l.d.FeaturesBF16 = f
	default:
		if bf16 {
			return fmt.Errorf("%s: dtype %s, want <u2 (bfloat16 bit patterns), as %s says feature_dtype: bfloat16", l.path(FeatFile), descr, ManifestFile)
		}
		return fmt.Errorf("%s: dtype %s, want float32 (convert with astype(numpy.float32))", l.path(FeatFile), descr)
	}
	if len(shape) != 2 || shape[0] != m.NumNodes || shape[1] != int64(m.FeatDim) {
		return fmt.Errorf("%s: shape %s, but %s says num_nodes = %d, feat_dim = %d",
			l.path(FeatFile), shapeText(shape), ManifestFile, m.NumNodes, m.FeatDim)
	}
	return nil
}

// shapeText renders a shape for messages: [1000 100].
func shapeText(shape []int64) string { return fmt.Sprint(shape) }
