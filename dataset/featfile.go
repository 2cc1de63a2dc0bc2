package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/dtype"
)

// OpenOptions change what Open reads.
type OpenOptions struct {
	// FeaturesOnDisk leaves a one-type dataset's feat.npy on disk:
	// Features and FeaturesBF16 stay nil, FeatureFile reads its rows
	// where they lie, and the values are not checked (Validate reads only
	// what is in memory). A typed dataset leaves each type's
	// types/<type>/feat.npy on disk the same way (VertexType.FeatureFile);
	// featureless types are as Open makes them.
	FeaturesOnDisk bool
}

// FeatureFile is a feature table left in its .npy file: [Rows, Dim]
// row-major values of DType (F32, or BF16 bit patterns), little-endian,
// read by row with positional reads, which any number of goroutines may
// issue at once. The dataset owns it (Close closes it).
type FeatureFile struct {
	Path  string // the file, for messages
	Rows  int64
	Dim   int
	DType dtype.DType

	offset int64 // bytes before row 0
	f      *os.File
}

// RowBytes is the size of one row in the file.
func (f *FeatureFile) RowBytes() int64 { return int64(f.Dim) * int64(f.DType.Size()) }

// ReadRows reads len(p)/RowBytes() whole rows from row first on into p
// (the file's bytes as they are: little-endian values of DType). A read
// past the end of the file (one truncated since it was opened) is an
// error naming it.
func (f *FeatureFile) ReadRows(p []byte, first int64) error {
	rb := f.RowBytes()
	n := int64(len(p)) / rb
	if first < 0 || int64(len(p))%rb != 0 || first+n > f.Rows {
		return fmt.Errorf("%s: rows [%d, %d) of %d bytes outside the table of %d rows", f.Path, first, first+n, rb, f.Rows)
	}
	_, err := f.f.ReadAt(p, f.offset+first*rb)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: truncated: rows [%d, %d) lie past the end of the file", f.Path, first, first+n)
	}
	if err != nil {
		return fmt.Errorf("%s: reading rows [%d, %d): %w", f.Path, first, first+n, err)
	}
	return nil
}

// Location is the file's path and the bytes before row 0 (the header),
// for a reader that opens the file itself (featstore.DirectFile).
func (f *FeatureFile) Location() (path string, offset int64) { return f.Path, f.offset }

// Close closes the file.
func (f *FeatureFile) Close() error { return f.f.Close() }

// OpenWith is Open with options.
func OpenWith(dir string, opt OpenOptions) (*Dataset, error) { return open(dir, opt) }

// openFeatureFile opens the feature table file of l's dataset without
// reading its values: its header's dtype (as loadTable checks it against
// the manifest's key) and shape ([rows, dim]; says is what the manifest
// says of them), and its size, which must hold every row.
func openFeatureFile(l loader, file string, rows int64, dim int, key, says string) (_ *FeatureFile, err error) {
	path := l.path(file)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	h, err := npy.ReadHeader(bufio.NewReaderSize(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ff := &FeatureFile{Path: path, Rows: rows, Dim: dim, DType: dtype.F32, offset: h.DataOffset, f: f}
	if h.Descr == "<u2" {
		ff.DType = dtype.BF16
	}
	if err := checkFeatureDType(path, h.Descr, h.Descr == "<f4", h.Descr == "<u2", key); err != nil {
		return nil, err
	}
	if len(h.Shape) != 2 || h.Shape[0] != rows || h.Shape[1] != int64(dim) || h.FortranOrder {
		return nil, fmt.Errorf("%s: shape %s (fortran_order %t), but %s says %s in C order", path, shapeText(h.Shape), h.FortranOrder, ManifestFile, says)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if want := h.DataOffset + rows*ff.RowBytes(); st.Size() < want {
		return nil, fmt.Errorf("%s: truncated: %d bytes, but %s says %s, which need %d (%d rows of %d bytes after a %d-byte header)",
			path, st.Size(), ManifestFile, says, want, rows, ff.RowBytes(), h.DataOffset)
	}
	l.d.closers = append(l.d.closers, f.Close)
	return ff, nil
}
