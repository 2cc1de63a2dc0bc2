package edgelist

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Files of the graph ImportBounded builds in its scratch directory: raw
// little-endian arrays, mapped once complete.
const (
	indptrRaw  = "indptr.i64"
	indicesRaw = "indices.i32"
)

// offsetWriter writes a CSR's row offsets (int64) from the rows' lengths,
// given in ascending row order: rows not given are empty.
type offsetWriter struct {
	w    *bufio.Writer
	next int64 // the row whose start offset is written next
	off  int64 // entries in the rows before next
	b    [8]byte
}

// row records that row r (above every row given before) has deg entries.
func (p *offsetWriter) row(r, deg int64) error {
	if r < p.next {
		return fmt.Errorf("row %d given after row %d", r, p.next-1)
	}
	if err := p.fillTo(r); err != nil {
		return err
	}
	p.off += deg
	return nil
}

// fillTo writes the start offsets of rows next..r, all at off.
func (p *offsetWriter) fillTo(r int64) error {
	for ; p.next <= r; p.next++ {
		binary.LittleEndian.PutUint64(p.b[:], uint64(p.off))
		if _, err := p.w.Write(p.b[:]); err != nil {
			return err
		}
	}
	return nil
}

// finish writes the offsets of the rows up to n (n+1 offsets in all) and
// flushes.
func (p *offsetWriter) finish(n int64) error {
	if err := p.fillTo(n); err != nil {
		return err
	}
	return p.w.Flush()
}

// csrWriter writes a CSR graph of n vertices from its entries' keys, in
// ascending order and each once, into the files indptr.i64 and indices.i32
// of a directory.
type csrWriter struct {
	n            int64
	ptrF, idxF   *os.File
	ptr          offsetWriter
	idx          *bufio.Writer
	row          int64 // the row being written, -1 before the first
	deg, entries int64
	b            [4]byte
}

// csrBuffer is the write buffer of each of the two files.
const csrBuffer = 1 << 20

func newCSRWriter(dir string, n int64) (*csrWriter, error) {
	ptrF, err := os.Create(filepath.Join(dir, indptrRaw))
	if err != nil {
		return nil, err
	}
	idxF, err := os.Create(filepath.Join(dir, indicesRaw))
	if err != nil {
		ptrF.Close()
		return nil, err
	}
	return &csrWriter{n: n, ptrF: ptrF, idxF: idxF, row: -1,
		ptr: offsetWriter{w: bufio.NewWriterSize(ptrF, csrBuffer)}, idx: bufio.NewWriterSize(idxF, csrBuffer)}, nil
}

// add appends the entry of key k.
func (w *csrWriter) add(k uint64) error {
	r, c := unkey(k)
	if int64(r) != w.row {
		if w.row >= 0 {
			if err := w.ptr.row(w.row, w.deg); err != nil {
				return err
			}
		}
		w.row, w.deg = int64(r), 0
	}
	binary.LittleEndian.PutUint32(w.b[:], uint32(c))
	if _, err := w.idx.Write(w.b[:]); err != nil {
		return err
	}
	w.deg++
	w.entries++
	return nil
}

// close ends the last row, flushes and closes both files.
func (w *csrWriter) close() error {
	var err error
	if w.row >= 0 {
		err = w.ptr.row(w.row, w.deg)
	}
	if err == nil {
		err = w.ptr.finish(w.n)
	}
	if err == nil {
		err = w.idx.Flush()
	}
	err = errors.Join(err, w.ptrF.Close(), w.idxF.Close())
	if err != nil {
		return fmt.Errorf("writing the graph: %w", err)
	}
	return nil
}
