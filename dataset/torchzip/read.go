// Package torchzip reads the tensors of a file written by PyTorch's
// torch.save in its zip format: a zip archive holding <name>/data.pkl, a
// pickle (protocol 2) of a dict of tensors, and <name>/data/<key>, each a
// tensor storage's raw little-endian bytes. It reads what Open Graph
// Benchmark's link-prediction split files hold (a dict of tensors of
// integers or floats) and nothing more: the pickle runs on a machine that
// knows only the few torch and collections names a tensor needs and
// refuses any other, every size is checked against the archive and a byte
// budget, and nothing is ever executed.
package torchzip

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/internal/pickle"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// DefaultMaxBytes bounds the bytes Read holds for tensors when the caller
// gives no bound (16 GiB).
const DefaultMaxBytes = 16 << 30

// maxPickle bounds data.pkl: it holds only the dict's structure.
const maxPickle = 64 << 20

// Tensor is a decoded tensor in C order. Integer and boolean tensors fill
// Ints, floating-point ones Floats.
type Tensor struct {
	DType  string // torch's name of the storage: "int64", "float32", ...
	Shape  []int64
	Ints   []int64
	Floats []float64
}

// Len is the number of elements.
func (t *Tensor) Len() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// IsFloat reports whether the tensor holds floating-point values.
func (t *Tensor) IsFloat() bool {
	return t.Floats != nil || t.DType == "float32" || t.DType == "float64"
}

// Read returns the dict of tensors in the torch.save zip file at file,
// holding at most maxBytes bytes of storages (<= 0: DefaultMaxBytes).
// Errors name the file.
func Read(file string, maxBytes int64) (map[string]*Tensor, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("%s: not a zip archive (%v): only torch.save's zip format (PyTorch 1.6 and later) is supported", file, err)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	defer zr.Close()
	out, err := readArchive(&zr.Reader, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// readArchive decodes the archive's data.pkl and the storages it names.
func readArchive(zr *zip.Reader, maxBytes int64) (map[string]*Tensor, error) {
	var pkl *zip.File
	for _, f := range zr.File {
		if path.Base(f.Name) == "data.pkl" && strings.Count(f.Name, "/") == 1 {
			if pkl != nil {
				return nil, fmt.Errorf("two pickles (%s and %s): want one <name>/data.pkl", quote.Quote(pkl.Name), quote.Quote(f.Name))
			}
			pkl = f
		}
	}
	if pkl == nil {
		return nil, errors.New("no <name>/data.pkl in the archive: not a torch.save file")
	}
	if err := checkByteOrder(zr, path.Dir(pkl.Name)+"/byteorder"); err != nil {
		return nil, err
	}
	data, err := readEntry(pkl, maxPickle)
	if err != nil {
		return nil, err
	}
	s := &storages{zr: zr, prefix: path.Dir(pkl.Name) + "/data/", budget: maxBytes, loaded: map[string]*storage{}}
	v, err := unpickle(data, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", quote.Quote(pkl.Name), err)
	}
	d, ok := v.(*pickle.Dict)
	if !ok {
		return nil, fmt.Errorf("%s holds a %s, want a dict of tensors", quote.Quote(pkl.Name), typeName(v))
	}
	out := map[string]*Tensor{}
	for _, k := range d.Keys() {
		name, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("%s: dict key is a %s, want a string", quote.Quote(pkl.Name), typeName(k))
		}
		v, _ := d.Get(k)
		t, ok := v.(*Tensor)
		if !ok {
			return nil, fmt.Errorf("%s: %s is a %s, want a tensor", quote.Quote(pkl.Name), quote.Quote(name), typeName(v))
		}
		out[name] = t
	}
	return out, nil
}

// Keys lists a result's keys in sorted order, for messages.
func Keys(m map[string]*Tensor) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkByteOrder refuses an archive whose byteorder entry (written since
// PyTorch 2.1) says its storages are not little-endian.
func checkByteOrder(zr *zip.Reader, name string) error {
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		b, err := readEntry(f, 16)
		if err != nil {
			return err
		}
		if order := strings.TrimSpace(string(b)); order != "little" {
			return fmt.Errorf("%s says %s: only little-endian storages are supported", quote.Quote(name), quote.Quote(order))
		}
	}
	return nil
}

// readEntry reads a zip entry of at most limit bytes, checking that it
// holds the size its header declares.
func readEntry(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", quote.Quote(f.Name), f.UncompressedSize64, limit)
	}
	r, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", quote.Quote(f.Name), err)
	}
	defer r.Close()
	buf := make([]byte, f.UncompressedSize64)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("%s: %w (truncated?)", quote.Quote(f.Name), err)
	}
	return buf, nil
}
