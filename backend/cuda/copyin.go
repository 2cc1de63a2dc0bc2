package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.HostCopier = (*Backend)(nil)

// copier is the queue of CopyIn: a stream of its own, made on first use,
// and its lock, which the backend's ops never take (a host function of
// theirs may wait for a copy in progress).
type copier struct {
	mu     sync.Mutex
	stream uintptr
	closed bool
}

// CopyIn copies n elements of src, host memory of UploadHost's, from
// srcOff into dst, device memory, from dstOff, by a copy engine on the
// copier's stream, and returns once they are there (backend.HostCopier).
// It holds the copier's lock and the goroutine's OS thread, not the
// backend's lock: another goroutine may be issuing ops, capturing or
// waiting in Sync meanwhile.
func (b *Backend) CopyIn(dst backend.Buffer, dstOff int, src backend.Buffer, srcOff, n int) error {
	d, s, err := b.copyArgs(dst, dstOff, src, srcOff, n)
	if err != nil || n == 0 {
		return err
	}
	size := uintptr(s.dt.Size())
	host := s.root.hostPtr + (s.ptr - s.root.ptr) + uintptr(srcOff)*size
	cp := &b.copier
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.closed {
		return fmt.Errorf("cuda: CopyIn: %w", errClosed)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	drv := b.drv
	if err := drv.call("cuCtxSetCurrent", drv.cuCtxSetCurrent, b.ctx); err != nil {
		return fmt.Errorf("cuda: CopyIn: %w", err)
	}
	if cp.stream == 0 {
		if err := drv.call("cuStreamCreate", drv.cuStreamCreate, uintptr(unsafe.Pointer(&cp.stream)), streamNonBlocking); err != nil {
			return fmt.Errorf("cuda: CopyIn: %w", err)
		}
	}
	if err := drv.call("cuMemcpyHtoDAsync_v2", drv.cuMemcpyHtoDAsync, d.ptr+uintptr(dstOff)*size, host, uintptr(n)*size, cp.stream); err != nil {
		return fmt.Errorf("cuda: CopyIn: %d elements: %w", n, err)
	}
	if err := drv.call("cuStreamSynchronize", drv.cuStreamSynchronize, cp.stream); err != nil {
		return fmt.Errorf("cuda: CopyIn: %w", err)
	}
	return nil
}

// copyArgs checks CopyIn's arguments: both the backend's, of one type,
// src mapped host memory and dst device memory, the ranges inside them.
func (b *Backend) copyArgs(dst backend.Buffer, dstOff int, src backend.Buffer, srcOff, n int) (d, s *buffer, err error) {
	d, okD := dst.(*buffer)
	s, okS := src.(*buffer)
	switch {
	case !okD || d == nil:
		err = fmt.Errorf("destination: %s", describeForeign(dst))
	case !okS || s == nil:
		err = fmt.Errorf("source: %s", describeForeign(src))
	case d.owner != b || s.owner != b:
		err = fmt.Errorf("a buffer of another CUDA backend")
	case d.dt != s.dt:
		err = fmt.Errorf("%v elements into a buffer of %v", s.dt, d.dt)
	case n < 0 || srcOff < 0 || dstOff < 0 || srcOff+n > s.n || dstOff+n > d.n:
		err = fmt.Errorf("%d elements from %d of %d into %d of %d", n, srcOff, s.n, dstOff, d.n)
	case n == 0:
	case s.root == nil || s.root.hostPtr == 0 || s.root.freed:
		err = fmt.Errorf("the source is not host memory of UploadHost's")
	case d.root == nil || d.root.hostPtr != 0 || d.root.freed:
		err = fmt.Errorf("the destination is not device memory of the backend's")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: CopyIn: %w", err)
	}
	return d, s, nil
}

// closeCopier destroys the copier's stream once a copy in progress has
// ended; later copies fail. The context is current.
func (b *Backend) closeCopier() {
	cp := &b.copier
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stream != 0 {
		b.drv.call("cuStreamDestroy_v2", b.drv.cuStreamDestroy, cp.stream)
		cp.stream = 0
	}
	cp.closed = true
}
