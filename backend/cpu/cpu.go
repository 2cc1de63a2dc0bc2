// Package cpu is the pure-Go backend: buffers are Go slices and every op runs
// on the calling goroutine plus a fixed pool of worker goroutines. It is also
// the numerical reference for the other backends.
//
// Ops run synchronously (a call returns when its output is written), so Sync
// only reports the sticky error. Work is split across threads by output rows
// or, for scatter-style ops and column sums, by output columns, so that every
// floating-point sum is accumulated in the same order for any thread count:
// results are bitwise identical for 1 and for N threads.
//
// Calls on one Backend are serialised by a mutex; a Backend may be shared by
// goroutines, but its ops do not overlap.
package cpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/gemm"
)

// Backend is the CPU backend. Create it with New.
type Backend struct {
	mu      sync.Mutex
	threads int
	pool    *pool
	gemm    *gemm.Context
	err     error // sticky: first failure of any op
	closed  bool

	inUse, peak int64 // bytes of live Alloc/Upload buffers

	// Scratch reused across ops (grow-only): reduction partial sums and the
	// source-grouped edge lists of AggregateBackward, and the gathered
	// gradient of AggregateConcatBackward.
	partial                      []float64
	tStart, tCursor, tEdge, tDst []int32
	gathered                     []float32
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.MemoryStats = (*Backend)(nil)
	_ backend.Closer      = (*Backend)(nil)
)

// New returns a CPU backend that uses threads worker threads (the caller's
// goroutine counts as one). threads < 1 means runtime.GOMAXPROCS(0).
func New(threads int) *Backend {
	if threads < 1 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := newPool(threads)
	b := &Backend{threads: threads, pool: p}
	b.gemm = gemm.NewContext(threads, p.run)
	// Stop the workers once the Backend is unreachable, if Close was not called.
	runtime.AddCleanup(b, func(p *pool) { p.close() }, p)
	return b
}

// Name describes the backend, e.g. "cpu (2 threads)".
func (b *Backend) Name() string {
	if b.threads == 1 {
		return "cpu (1 thread)"
	}
	return fmt.Sprintf("cpu (%d threads)", b.threads)
}

// Threads is the number of worker threads.
func (b *Backend) Threads() int { return b.threads }

// Close stops the worker goroutines. The Backend must not be used afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.pool.close()
	return nil
}

// Sync returns the first error recorded by any op (ops are synchronous).
func (b *Backend) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// fail records err as the sticky error unless one is already recorded.
func (b *Backend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// errClosed is recorded when an op runs after Close.
var errClosed = errors.New("cpu: backend is closed")

// InUseBytes is the size of live buffers made by Alloc and Upload.
func (b *Backend) InUseBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inUse
}

// PeakBytes is the largest InUseBytes since New or the last ResetPeak.
func (b *Backend) PeakBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// ResetPeak sets PeakBytes to InUseBytes.
func (b *Backend) ResetPeak() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.peak = b.inUse
}

// scratch64 returns a zeroed float64 scratch slice of n elements, reused
// across ops (grow-only).
func (b *Backend) scratch64(n int) []float64 {
	if cap(b.partial) < n {
		b.partial = make([]float64, n)
	}
	s := b.partial[:n]
	clear(s)
	return s
}
