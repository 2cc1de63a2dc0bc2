// Package profile wraps a backend.Backend to measure how much device time
// each named op takes. Every op call is forwarded to the wrapped backend;
// when that backend implements backend.Timer, a Mark is enqueued before and
// after the op, and the time between the two is added to the op's total.
// Marks are settled lazily, after a Sync or a Read (when the device has
// passed them, so reading them does not stall the stream), or by Report.
//
// Profiling is for eager runs: the wrapper does not forward capture
// (backend.Capturer), so the replay driver cannot use it. The time of an op
// is the device time from the mark before it to the mark after it, so it
// includes any wait inside the op (an eager CUDA Linear reads its live row
// count back to the host and launches its GEMM after that read), and, when
// the device has run out of work as the op is issued (after such a read),
// the time the host takes to issue it. The CUDA backend launches the work
// it queues (Adam, FlagOverflow) at a mark, so each op's work is timed
// under that op.
package profile

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fanout-gnn/fanout/backend"
)

// OpTime is the device time of one op name.
type OpTime struct {
	Name  string
	Calls int           // calls issued (timed or not)
	Time  time.Duration // summed device time between each call's marks
}

// span is one timed call whose marks are not yet settled.
type span struct {
	name          string
	before, after backend.Mark
}

// Backend forwards to an inner backend and times its ops. Create it with
// New. It is safe for concurrent use, like the backends it wraps.
type Backend struct {
	inner backend.Backend
	timer backend.Timer // nil: calls are counted, not timed

	mu      sync.Mutex
	pending []span
	totals  map[string]*OpTime
	err     error // first timing failure; timing stops after it
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.MemoryStats = (*Backend)(nil)
	_ backend.Closer      = (*Backend)(nil)
	_ backend.Timer       = (*Backend)(nil)
)

// New wraps inner. The wrapper owns no memory.
func New(inner backend.Backend) *Backend {
	b := &Backend{inner: inner, totals: map[string]*OpTime{}}
	b.timer, _ = inner.(backend.Timer)
	return b
}

// Inner is the wrapped backend.
func (b *Backend) Inner() backend.Backend { return b.inner }

// Name is the inner backend's name with " + profile" appended.
func (b *Backend) Name() string { return b.inner.Name() + " + profile" }

// Timed reports whether the inner backend can time ops (backend.Timer).
func (b *Backend) Timed() bool { return b.timer != nil }

// Err is the first failure to place or read a mark (timing stops after
// it; ops are still forwarded).
func (b *Backend) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// op runs f between two marks and counts the call under name.
func (b *Backend) op(name string, f func()) {
	before := b.mark()
	f()
	after := b.mark()
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.totals[name]
	if t == nil {
		t = &OpTime{Name: name}
		b.totals[name] = t
	}
	t.Calls++
	if before == nil || after == nil {
		closeMarks(before, after)
		return
	}
	b.pending = append(b.pending, span{name: name, before: before, after: after})
}

// mark enqueues a mark, or returns nil when timing is off or failed.
func (b *Backend) mark() backend.Mark {
	b.mu.Lock()
	off := b.timer == nil || b.err != nil
	b.mu.Unlock()
	if off {
		return nil
	}
	m, err := b.timer.Mark()
	if err != nil {
		b.mu.Lock()
		b.fail(fmt.Errorf("profile: Mark: %w", err))
		b.mu.Unlock()
		return nil
	}
	return m
}

// fail records the first timing error; the caller holds b.mu.
func (b *Backend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func closeMarks(ms ...backend.Mark) {
	for _, m := range ms {
		if m != nil {
			m.Close()
		}
	}
}

// settle reads the marks of every pending call into the totals. After a
// Sync or Read the device has passed them all, so no read waits.
func (b *Backend) settle() {
	b.mu.Lock()
	pend := b.pending
	b.pending = nil
	b.mu.Unlock()
	for i, s := range pend {
		d, err := s.after.Since(s.before)
		closeMarks(s.before, s.after)
		b.mu.Lock()
		if err != nil {
			b.fail(fmt.Errorf("profile: reading the marks of %s: %w", s.name, err))
			b.mu.Unlock()
			for _, r := range pend[i+1:] {
				closeMarks(r.before, r.after)
			}
			return
		}
		t := b.totals[s.name]
		if t == nil { // cleared by a concurrent Reset
			t = &OpTime{Name: s.name}
			b.totals[s.name] = t
		}
		t.Time += d
		b.mu.Unlock()
	}
}

// Report settles pending marks (waiting for the device when an op issued
// since the last Sync has not finished) and returns the totals per op
// name, the largest time first (then the most calls, then by name).
func (b *Backend) Report() []OpTime {
	b.settle()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]OpTime, 0, len(b.totals))
	for _, t := range b.totals {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.Time != c.Time {
			return a.Time > c.Time
		}
		if a.Calls != c.Calls {
			return a.Calls > c.Calls
		}
		return a.Name < c.Name
	})
	return out
}

// Reset settles pending marks and clears the totals (for example after a
// warm-up), keeping any timing error.
func (b *Backend) Reset() {
	b.settle()
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.totals)
}

// Sync forwards, then settles the marks the device has now passed.
func (b *Backend) Sync() error {
	err := b.inner.Sync()
	b.settle()
	return err
}

// Mark forwards to the inner Timer (the wrapper's own marks are not seen
// by the caller). Without one it is an error.
func (b *Backend) Mark() (backend.Mark, error) {
	if b.timer == nil {
		return nil, errors.New("profile: Mark: the wrapped backend has no timer")
	}
	return b.timer.Mark()
}

// InUseBytes forwards to the inner backend's MemoryStats (0 without one).
func (b *Backend) InUseBytes() int64 { return backend.MemoryOf(b.inner).InUseBytes() }

// PeakBytes forwards to the inner backend's MemoryStats (0 without one).
func (b *Backend) PeakBytes() int64 { return backend.MemoryOf(b.inner).PeakBytes() }

// ResetPeak forwards to the inner backend's MemoryStats (no-op without one).
func (b *Backend) ResetPeak() { backend.MemoryOf(b.inner).ResetPeak() }

// Close drops pending marks and closes the inner backend when it is a
// backend.Closer.
func (b *Backend) Close() error {
	b.mu.Lock()
	pend := b.pending
	b.pending = nil
	b.mu.Unlock()
	for _, s := range pend {
		closeMarks(s.before, s.after)
	}
	if c, ok := b.inner.(backend.Closer); ok {
		return c.Close()
	}
	return nil
}
