// Package npz reads NumPy .npz archives (a zip of .npy members) and imports
// graph datasets stored as sparse CSR matrices in .npz files, in the layout of
// the gnn-benchmark collection (Shchur et al., "Pitfalls of Graph Neural
// Network Evaluation", 2018): adj_data/adj_indices/adj_indptr/adj_shape for
// the graph, attr_* (sparse) or attr_matrix (dense) for node features and
// labels (dense, indexed by label_indices, or labels_* sparse one-hot rows)
// for classes, which class_names, where present, counts and bounds. The
// train/valid/test split is drawn per class from a seed.
package npz

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// Archive is an opened .npz file. Members are read one at a time, on demand.
type Archive struct {
	name    string // file name used in messages
	zr      *zip.Reader
	members map[string]*zip.File // key (member name without ".npy") -> member
	closer  io.Closer
}

// Open opens the .npz file at path. Close it when done.
func Open(path string) (*Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a, err := NewArchive(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	a.closer = f
	return a, nil
}

// NewArchive reads the zip directory of an .npz held in r (size bytes);
// name is used in error messages.
func NewArchive(r io.ReaderAt, size int64, name string) (*Archive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable .npz (zip) archive: %w", name, err)
	}
	a := &Archive{name: name, zr: zr, members: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := a.members[key]; dup {
			return nil, fmt.Errorf("%s: member %s appears twice", name, quote.Quote(f.Name))
		}
		a.members[key] = f
	}
	return a, nil
}

// Name is the file name given to Open or NewArchive.
func (a *Archive) Name() string { return a.name }

// Base is the file name without directories, for messages.
func (a *Archive) Base() string { return filepath.Base(a.name) }

// Keys lists the array names in the archive, sorted.
func (a *Archive) Keys() []string {
	keys := make([]string, 0, len(a.members))
	for k := range a.members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Has reports whether the archive holds the array key.
func (a *Archive) Has(key string) bool {
	_, ok := a.members[key]
	return ok
}

// Read decodes array key with npy.Read: data is a typed slice ([]float32,
// []int64, ...) in C order and shape its dimensions. The member is read to
// its end, so that its CRC-32 is checked: a damaged member is an error even
// where its bytes still parse, and so are bytes after the array. Errors name
// the archive and the key.
func (a *Archive) Read(key string) (data any, shape []int64, err error) {
	extra, err := a.readMember(key, func(r io.Reader) (err error) {
		data, shape, err = npy.Read(r)
		return err
	})
	if err == nil && extra > 0 {
		err = fmt.Errorf("%s: %s: %d bytes after the array's data (shape %s)", a.name, key, extra, npy.ShapeString(shape))
	}
	if err != nil {
		return nil, nil, err
	}
	return data, shape, nil
}

// Shape reads the shape of array key from its header, whatever its dtype
// (strings and pickled objects too, which Read does not decode). The member
// is read to its end, so that its CRC-32 is checked.
func (a *Archive) Shape(key string) (shape []int64, err error) {
	_, err = a.readMember(key, func(r io.Reader) error {
		h, err := npy.ReadHeader(r)
		shape = h.Shape
		return err
	})
	return shape, err
}

// readMember opens member key, calls read on it, then reads it to its end,
// where zip checks the CRC-32, and returns how many bytes read had left.
func (a *Archive) readMember(key string, read func(io.Reader) error) (extra int64, err error) {
	f, ok := a.members[key]
	if !ok {
		return 0, fmt.Errorf("%s: no array %q (has %s)", a.name, key, a.keyList())
	}
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", a.name, key, err)
	}
	defer rc.Close()
	err = read(rc)
	extra, rest := io.Copy(io.Discard, rc)
	if errors.Is(rest, zip.ErrChecksum) {
		return 0, fmt.Errorf("%s: member %s is damaged (its CRC-32 does not match)", a.name, quote.Quote(f.Name))
	}
	if err == nil {
		err = rest
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", a.name, key, err)
	}
	return extra, nil
}

// keyList names the archive's arrays for messages, at most quote.Limit
// bytes of them.
func (a *Archive) keyList() string {
	keys := a.Keys()
	list := strings.Join(keys, ", ")
	if len(list) <= quote.Limit {
		return list
	}
	return fmt.Sprintf("%d arrays: %s", len(keys), quote.Quote(list))
}

// Close closes the underlying file (a no-op for NewArchive).
func (a *Archive) Close() error {
	if a.closer == nil {
		return nil
	}
	return a.closer.Close()
}
