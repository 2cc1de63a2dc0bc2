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
// are converted, which copies them. The caller must Close the dataset. A
// typed dataset's manifest (format_version 2) opens a typed dataset, its
// per-type tables and per-relation graphs mapped the same way
// (openTyped). OpenWith leaves the features on disk instead.
func Open(dir string) (*Dataset, error) { return open(dir, OpenOptions{}) }

// open is Open with options (OpenWith).
func open(dir string, opt OpenOptions) (_ *Dataset, err error) {
	path := filepath.Join(dir, ManifestFile)
	typed, err := IsTyped(path)
	if err != nil {
		return nil, err
	}
	if typed {
		return openTyped(dir, opt)
	}
	m, err := ReadManifest(path)
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
	says := fmt.Sprintf("num_nodes = %d, feat_dim = %d", m.NumNodes, m.FeatDim)
	if opt.FeaturesOnDisk {
		d.FeatureFile, err = openFeatureFile(l, FeatFile, m.NumNodes, m.FeatDim, m.FeatureDType, says)
	} else {
		d.Features, d.FeaturesBF16, err = loadTable(l, FeatFile, m.NumNodes, m.FeatDim, m.FeatureDType, says)
	}
	if err != nil {
		return nil, err
	}
	if err = loadTarget(l, m.NumNodes, "num_nodes", [3]int64{m.NumTrain, m.NumValid, m.NumTest}); err != nil {
		return nil, err
	}
	if err = loadLink(l, m); err != nil {
		return nil, err
	}
	if err = l.validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// validate validates the opened dataset, naming its files by their paths.
func (l loader) validate() error {
	if err := l.d.Validate(); err != nil {
		if fe, ok := err.(*FileError); ok {
			return &FileError{File: l.path(fe.File), Err: fe.Err}
		}
		return fmt.Errorf("%s: %w", l.dir, err)
	}
	return nil
}

// loadTarget maps the labels of the n labelled vertices (count names n in
// the manifest) and the splits of sizes (train, valid, test) into l's
// dataset.
func loadTarget(l loader, n int64, count string, sizes [3]int64) (err error) {
	d := l.d
	if d.Labels, err = loadInt[int32](l, LabelFile, n, count); err != nil {
		return err
	}
	for i, s := range []struct {
		file, field string
		dst         *[]int64
	}{{TrainFile, "num_train", &d.Train}, {ValidFile, "num_valid", &d.Valid}, {TestFile, "num_test", &d.Test}} {
		if *s.dst, err = loadInt[int64](l, s.file, sizes[i], s.field); err != nil {
			return err
		}
	}
	return nil
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

// loadTable maps a feature table, [rows, dim] of the manifest's
// feature_dtype key: float32 (<f4), or bfloat16 bit patterns (<u2). says
// is what the manifest says of rows and dim, for messages.
func loadTable(l loader, file string, rows int64, dim int, key, says string) ([]float32, []uint16, error) {
	data, shape, err := l.load(file)
	if err != nil {
		return nil, nil, err
	}
	descr, _ := npy.Descr(data)
	f32, _ := data.([]float32)
	b16, _ := data.([]uint16)
	if err := checkFeatureDType(l.path(file), descr, f32 != nil, b16 != nil, key); err != nil {
		return nil, nil, err
	}
	if len(shape) != 2 || shape[0] != rows || shape[1] != int64(dim) {
		return nil, nil, fmt.Errorf("%s: shape %s, but %s says %s", l.path(file), shapeText(shape), ManifestFile, says)
	}
	return f32, b16, nil
}

// checkFeatureDType checks a feature file's dtype (descr, as the file
// writes it; f32 and u2 say whether it is <f4 or <u2) against the
// manifest's feature_dtype key.
func checkFeatureDType(path, descr string, f32, u2 bool, key string) error {
	bf16 := key == DTypeBFloat16
	switch {
	case f32 && bf16:
		return fmt.Errorf("%s: dtype %s, but %s says feature_dtype: bfloat16, which feat.npy stores as <u2 (bfloat16 bit patterns)", path, descr, ManifestFile)
	case u2 && !bf16:
		return fmt.Errorf("%s: dtype %s, but %s has no feature_dtype: bfloat16 (add it if the file holds bfloat16 bit patterns; float32 features are <f4)", path, descr, ManifestFile)
	case f32 || u2:
		return nil
	case bf16:
		return fmt.Errorf("%s: dtype %s, want <u2 (bfloat16 bit patterns), as %s says feature_dtype: bfloat16", path, descr, ManifestFile)
	}
	return fmt.Errorf("%s: dtype %s, want float32 (convert with astype(numpy.float32))", path, descr)
}

// shapeText renders a shape for messages: [1000 100].
func shapeText(shape []int64) string { return fmt.Sprint(shape) }
