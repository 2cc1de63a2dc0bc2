package graphbolt

import (
	"fmt"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// entry is one file entry of metadata.yaml: where it is (for messages,
// "feature_data[0]"), its format and path.
type entry struct {
	field, format, path string
}

// file is the entry's path in dir, after checking its format is one this
// package reads: numpy, or csv where csv is allowed (the path itself was
// checked with the metadata: checkPaths).
func (e entry) file(dir string, csv bool) (string, error) {
	switch {
	case e.format == "torch":
		return "", fmt.Errorf("%s: %s is format: torch (%s), a PyTorch file fanout cannot read; save it with numpy.save and set format: numpy",
			MetadataFile, e.field, quote.Quote(e.path))
	case e.format == "csv" && csv, e.format == "numpy":
	default:
		want := "numpy"
		if csv {
			want = "numpy or csv"
		}
		return "", fmt.Errorf("%s: %s has format %s, want %s", MetadataFile, e.field, quote.Quote(e.format), want)
	}
	if e.path == "" {
		return "", fmt.Errorf("%s: %s has no path", MetadataFile, e.field)
	}
	return filepath.Join(dir, filepath.FromSlash(e.path)), nil
}

// readInts reads a numpy array of integers, checking its shape with want
// (which words the problem, or returns "").
func readInts(dir string, e entry, want func(shape []int64) string) ([]int64, []int64, error) {
	return readAs(dir, e, want, npy.Int64s)
}

// readFloats reads a numpy array of numbers as float32.
func readFloats(dir string, e entry, want func(shape []int64) string) ([]float32, []int64, error) {
	return readAs(dir, e, want, npy.Float32s)
}

// readAs reads a numpy array and converts it with conv.
func readAs[T any](dir string, e entry, want func(shape []int64) string, conv func(any) ([]T, error)) ([]T, []int64, error) {
	path, data, shape, err := readArray(dir, e, want)
	if err != nil {
		return nil, nil, err
	}
	out, err := conv(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s (%s): %w", path, e.field, err)
	}
	return out, shape, nil
}

// readArray reads the .npy file of a numpy entry and checks its shape.
func readArray(dir string, e entry, want func(shape []int64) string) (string, any, []int64, error) {
	path, err := e.file(dir, false)
	if err != nil {
		return "", nil, nil, err
	}
	data, shape, err := npy.ReadFile(path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s (%s): %w", path, e.field, err)
	}
	if problem := want(shape); problem != "" {
		return "", nil, nil, fmt.Errorf("%s (%s): shape %s, want %s", path, e.field, npy.ShapeString(shape), problem)
	}
	return path, data, shape, nil
}
