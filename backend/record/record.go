// Package record wraps any backend.Backend so that it can capture and
// replay a sequence of ops (backend.Capturer) the way a CUDA graph does.
// Between BeginCapture and EndCapture each op call is stored as a closure
// over its arguments (buffers, counts and *Block pointers as given, so a
// replay sees the current contents of the same memory and Block structs)
// instead of running; Replay.Launch runs the stored calls in order on the
// wrapped backend. With it the replay driver runs on the CPU backend, in
// tests and CI, exactly as it does on CUDA.
//
// Outside a capture every method forwards to the wrapped backend, and
// buffers are the wrapped backend's own. During a capture Alloc, Upload,
// UploadGraph, Write, Read, Free and Sync are errors: the first is recorded
// as a sticky error, returned by EndCapture and by every later Sync.
package record

import (
	"errors"
	"fmt"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// Backend forwards to an inner backend and adds capture. Create it with New.
type Backend struct {
	inner backend.Backend

	mu        sync.Mutex
	capturing bool
	ops       []func() // calls recorded by the capture in progress
	err       error    // sticky: first misuse (capture rules, closed replays)
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Capturer    = (*Backend)(nil)
	_ backend.MemoryStats = (*Backend)(nil)
	_ backend.Closer      = (*Backend)(nil)
)

// New wraps inner. The wrapper owns no memory; inner must not be used
// directly while a capture is in progress.
func New(inner backend.Backend) *Backend { return &Backend{inner: inner} }

// Inner is the wrapped backend.
func (b *Backend) Inner() backend.Backend { return b.inner }

// Name is the inner backend's name with " + record" appended.
func (b *Backend) Name() string { return b.inner.Name() + " + record" }

// do runs f now, or appends it to the capture in progress.
func (b *Backend) do(f func()) {
	b.mu.Lock()
	if b.capturing {
		b.ops = append(b.ops, f)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	f()
}

// fail records err as the sticky error unless one is already recorded.
// The caller holds b.mu.
func (b *Backend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// refuse reports (and records) an error when op is called during a capture.
func (b *Backend) refuse(op string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.capturing {
		return nil
	}
	err := fmt.Errorf("record: %s: not allowed during a capture", op)
	b.fail(err)
	return err
}

// Sync returns the first error recorded by the wrapper, else the inner
// backend's Sync. During a capture it is itself an error.
func (b *Backend) Sync() error {
	if err := b.refuse("Sync"); err != nil {
		return b.stickyErr()
	}
	if err := b.stickyErr(); err != nil {
		return err
	}
	return b.inner.Sync()
}

func (b *Backend) stickyErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// InUseBytes forwards to the inner backend's MemoryStats (0 without one).
func (b *Backend) InUseBytes() int64 { return backend.MemoryOf(b.inner).InUseBytes() }

// PeakBytes forwards to the inner backend's MemoryStats (0 without one).
func (b *Backend) PeakBytes() int64 { return backend.MemoryOf(b.inner).PeakBytes() }

// ResetPeak forwards to the inner backend's MemoryStats (no-op without one).
func (b *Backend) ResetPeak() { backend.MemoryOf(b.inner).ResetPeak() }

// Close closes the inner backend when it is a backend.Closer. Closing
// during a capture is an error (the inner backend is still closed).
func (b *Backend) Close() error {
	err := b.refuse("Close")
	if c, ok := b.inner.(backend.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}
