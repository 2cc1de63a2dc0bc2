package edgelist

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
)

// minBlock is the fewest keys a run is read in at a time while merging:
// it bounds how many runs one pass merges within the memory budget.
const minBlock = 512

// fanIn is how many runs one merge pass reads at once with an arena of
// that many keys: each gets a block of at least minBlock keys.
func fanIn(arena int64) int {
	return int(max(2, arena/minBlock))
}

// mergeHeap orders cursors by their current key.
type mergeHeap []*cursor

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].keys[0] < h[j].keys[0] }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *mergeHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// merge hands every key of the cursors to emit in ascending order, each
// distinct key once, and returns how many keys it read. Every checkEvery
// keys it stops if ctx is done and reports the keys read to read (when
// non-nil).
func merge(ctx context.Context, cs []*cursor, emit func(uint64) error, read func(int64)) (int64, error) {
	h := make(mergeHeap, 0, len(cs))
	for _, c := range cs {
		if len(c.keys) > 0 {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var n int64
	var last uint64
	first := true
	for len(h) > 0 {
		c := h[0]
		k := c.keys[0]
		if first || k != last {
			if err := emit(k); err != nil {
				return n, err
			}
			last, first = k, false
		}
		n++
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			if read != nil {
				read(n)
			}
		}
		if c.keys = c.keys[1:]; len(c.keys) == 0 {
			if err := c.fill(); err != nil {
				return n, err
			}
		}
		if len(c.keys) == 0 {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	if read != nil {
		read(n)
	}
	return n, nil
}

// openRuns opens a cursor on each run, sharing arena out among them.
func openRuns(rs []run, arena []uint64) ([]*cursor, error) {
	block := len(arena) / len(rs)
	cs := make([]*cursor, 0, len(rs))
	for i, r := range rs {
		c, err := openCursor(r, arena[i*block:(i+1)*block:(i+1)*block])
		if err != nil {
			closeAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// closeAll closes the cursors' files.
func closeAll(cs []*cursor) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// reduce merges runs, fanIn at a time, into longer runs until one pass
// can merge them all; it returns how many passes that took.
func (s *runSet) reduce(ctx context.Context, arena []uint64, onPass func(pass int, keys int64)) (int, error) {
	k := fanIn(int64(len(arena)))
	passes := 0
	for len(s.runs) > k {
		passes++
		group := s.runs[:k]
		if onPass != nil {
			onPass(passes, totalKeys(group))
		}
		r, err := s.mergeInto(ctx, group, arena)
		if err != nil {
			return passes, err
		}
		if err := s.remove(group); err != nil {
			return passes, err
		}
		s.runs = s.runs[k:]
		s.added(r)
	}
	return passes, nil
}

// totalKeys is the number of keys of runs.
func totalKeys(rs []run) int64 {
	var n int64
	for _, r := range rs {
		n += r.n
	}
	return n
}

// mergeInto merges runs into one new run.
func (s *runSet) mergeInto(ctx context.Context, rs []run, arena []uint64) (_ run, err error) {
	// A quarter of the arena buffers the output, the rest the inputs.
	q := len(arena) / 4
	out := arena[:q:q]
	cs, err := openRuns(rs, arena[len(out):])
	if err != nil {
		return run{}, err
	}
	defer func() { err = errors.Join(err, closeAll(cs)) }()
	f, path, err := s.create()
	if err != nil {
		return run{}, err
	}
	w := &runWriter{f: f, buf: out[:0]}
	_, err = merge(ctx, cs, w.add, nil)
	if err == nil {
		err = w.flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return run{}, fmt.Errorf("merging sorted runs: %w", err)
	}
	return run{path: path, n: w.n}, nil
}

// runWriter writes keys to a run file through a buffer of keys.
type runWriter struct {
	f   *os.File
	buf []uint64
	n   int64
}

func (w *runWriter) add(k uint64) error {
	if len(w.buf) == cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, k)
	w.n++
	return nil
}

func (w *runWriter) flush() error {
	toLittleEndian(w.buf, asBytes(w.buf))
	_, err := w.f.Write(asBytes(w.buf))
	w.buf = w.buf[:0]
	return err
}
