package edgelist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// run is one sorted, duplicate-free run of keys in a file of its own.
type run struct {
	path string
	n    int64 // keys
}

// runSet is the runs of one import, in the directory dir.
type runSet struct {
	dir  string
	runs []run
	seq  int   // names the next run file
	disk int64 // bytes of the runs on disk now
	peak int64 // the most bytes of runs there have been at once
}

// create opens a new run file.
func (s *runSet) create() (*os.File, string, error) {
	s.seq++
	path := filepath.Join(s.dir, fmt.Sprintf("run-%06d", s.seq))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	return f, path, err
}

// added records a run written.
func (s *runSet) added(r run) {
	s.runs = append(s.runs, r)
	s.disk += r.n * keyBytes
	s.peak = max(s.peak, s.disk)
}

// remove deletes runs that have been merged.
func (s *runSet) remove(rs []run) error {
	var errs []error
	for _, r := range rs {
		errs = append(errs, os.Remove(r.path))
		s.disk -= r.n * keyBytes
	}
	return errors.Join(errs...)
}

// spill sorts keys in parts (one per thread) and writes each part, its
// repeats dropped, as a run. It overwrites keys.
func (s *runSet) spill(keys []uint64, threads int) error {
	parts := sortParts(keys, threads)
	for _, p := range parts {
		f, path, err := s.create()
		if err != nil {
			return err
		}
		toLittleEndian(p, asBytes(p))
		_, err = f.Write(asBytes(p))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing a sorted run: %w", err)
		}
		s.added(run{path: path, n: int64(len(p))})
	}
	return nil
}

// sortParts sorts keys in up to threads parts at once, drops the repeats
// within each part, and returns the parts (slices of keys).
func sortParts(keys []uint64, threads int) [][]uint64 {
	parts := make([][]uint64, threads)
	parallel.Range(int64(len(keys)), threads, func(t int, lo, hi int64) {
		p := keys[lo:hi]
		slices.Sort(p)
		parts[t] = slices.Compact(p)
	})
	return slices.DeleteFunc(parts, func(p []uint64) bool { return len(p) == 0 })
}

// asBytes is the memory of keys as bytes.
func asBytes(keys []uint64) []byte {
	if len(keys) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&keys[0])), len(keys)*keyBytes)
}

// cursor reads the keys of one sorted source a block at a time: a run
// file, or a sorted slice already in memory (f nil).
type cursor struct {
	f     *os.File
	block []uint64 // the buffer a run is read into
	keys  []uint64 // what is left of the current block
	left  int64    // keys of the run not yet read into the block
}

// openCursor opens run r, reading it through buf.
func openCursor(r run, buf []uint64) (*cursor, error) {
	f, err := os.Open(r.path)
	if err != nil {
		return nil, err
	}
	c := &cursor{f: f, block: buf, left: r.n}
	if err := c.fill(); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// fill reads the next block of the run; keys is empty at its end.
func (c *cursor) fill() error {
	if c.f == nil || c.left == 0 {
		c.keys = nil
		return nil
	}
	b := c.block[:min(int64(len(c.block)), c.left)]
	if _, err := io.ReadFull(c.f, asBytes(b)); err != nil {
		return fmt.Errorf("reading sorted run %s: %w", filepath.Base(c.f.Name()), err)
	}
	fromLittleEndian(b, asBytes(b))
	c.keys, c.left = b, c.left-int64(len(b))
	return nil
}

// close closes the run file.
func (c *cursor) close() error {
	if c.f == nil {
		return nil
	}
	return c.f.Close()
}
