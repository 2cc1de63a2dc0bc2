package cuda

import (
	"unsafe"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.Concurrent = (*Backend)(nil)

// sideQueue is the backend's second stream (backend.Concurrent). While
// active, b.stream is the side stream and main holds the first; ops then
// use the side's own scratch slots, so work beside the main stream never
// shares scratch with it. The stream has the device's highest priority
// (the work put beside is a chain of short launches; the priority made no
// measurable difference to the replayed step, whose graph may not keep
// it).
type sideQueue struct {
	stream, fork, join uintptr
	main               uintptr // the backend's stream while the side is active
	active             bool    // ops go to the side stream
	open               bool    // the side stream has work not yet joined
	// marks are the events recorded at the end of the last Beside calls
	// (a ring: call n's is marks[n % len]); calls counts Beside calls and
	// joined is the last call whose work the stream waits for.
	marks         [sideMarks]uintptr
	calls, joined uint64
	// blas is the side stream's cuBLAS handle (blasOf), made at its first
	// product, with a workspace of its own.
	blas *cublas
}

// sideMarks is how many recent Beside calls JoinTo can tell apart; a mark
// older than that joins all of the side's work (Join).
const sideMarks = 8

// lane is the scratch row of the queue that ops go to.
func (s *sideQueue) lane() int {
	if s.active {
		return 1
	}
	return 0
}

// Beside issues fn's ops on the side stream: they wait for every op issued
// before and run beside the ops issued after Beside returns, until Join or
// a JoinTo of the mark it returns (or of a later one). Deferred launches
// (padding stashes, Adam and overflow queues) are flushed on their own
// stream on the way in and out. Beside may not nest.
func (b *Backend) Beside(fn func()) backend.SideMark {
	c := b.begin("Beside")
	ok := c.ok && c.fork()
	c.end()
	fn()
	if !ok {
		return 0
	}
	c = b.beginAlways("Beside") // flushes the side's deferred launches on the side stream
	defer c.end()
	s := &b.side
	b.stream, s.active = s.main, false
	s.calls++
	ev, err := b.markEvent(s.calls)
	if err == nil {
		err = b.drv.call("cuEventRecord", b.drv.cuEventRecord, ev, s.stream)
	}
	if err != nil {
		c.fail(err)
		return 0
	}
	return backend.SideMark(s.calls)
}

// markEvent is the event of Beside call n (made on first use).
func (b *Backend) markEvent(n uint64) (uintptr, error) {
	ev := &b.side.marks[n%sideMarks]
	if *ev == 0 {
		d := b.drv
		if err := d.call("cuEventCreate", d.cuEventCreate, uintptr(unsafe.Pointer(ev)), eventDisableTiming); err != nil {
			return 0, err
		}
	}
	return *ev, nil
}

// Join makes the ops issued after it wait for the side stream's work.
func (b *Backend) Join() {
	c := b.begin("Join")
	defer c.end()
	c.joinSide()
}

// JoinTo makes the ops issued after it wait for the side stream's work up
// to the end of the Beside call that returned m (every call's, where m is
// too old to tell apart).
func (b *Backend) JoinTo(m backend.SideMark) {
	c := b.begin("JoinTo")
	defer c.end()
	s, n := &b.side, uint64(m)
	switch {
	case n > s.calls:
		c.failf("JoinTo: mark %d is not from a Beside call (%d so far)", n, s.calls)
	case n == 0 || n <= s.joined || !s.open || s.active:
		return // nothing to wait for (or still beside, where Join does nothing either)
	case n+sideMarks <= s.calls || n == s.calls:
		c.joinSide() // the ring has moved on, or the mark is the side's last work
	default:
		d := b.drv
		if err := d.call("cuStreamWaitEvent", d.cuStreamWaitEvent, b.stream, s.marks[n%sideMarks], 0); err != nil {
			c.fail(err)
			return
		}
		s.joined = n
	}
}

// fork makes the side stream (once), has it wait for the stream's work so
// far, and sends the ops that follow to it.
func (c *call) fork() bool {
	b, d := c.b, c.b.drv
	s := &b.side
	if s.active {
		c.failf("already beside: Beside calls may not nest")
		return false
	}
	if s.stream == 0 {
		var least, greatest int32
		if err := d.call("cuCtxGetStreamPriorityRange", d.cuCtxGetStreamPriorityRange,
			uintptr(unsafe.Pointer(&least)), uintptr(unsafe.Pointer(&greatest))); err != nil {
			c.fail(err)
			return false
		}
		if err := d.call("cuStreamCreateWithPriority", d.cuStreamCreateWithPriority,
			uintptr(unsafe.Pointer(&s.stream)), streamNonBlocking, uintptr(greatest)); err != nil {
			c.fail(err)
			return false
		}
		for _, ev := range []*uintptr{&s.fork, &s.join} {
			if err := d.call("cuEventCreate", d.cuEventCreate, uintptr(unsafe.Pointer(ev)), eventDisableTiming); err != nil {
				c.fail(err)
				return false
			}
		}
	}
	if !c.wait(s.stream, b.stream, s.fork) {
		return false
	}
	s.main, b.stream = b.stream, s.stream
	s.active, s.open = true, true
	return true
}

// joinSide has the stream wait for the side stream's work, if any is not
// joined yet. Sync, Read and EndCapture join first, so the host never
// sees, and a capture never leaves, side work unfinished.
func (c *call) joinSide() {
	s := &c.b.side
	if !s.open || s.active {
		return
	}
	if c.wait(c.b.stream, s.stream, s.join) {
		s.open, s.joined = false, s.calls
	}
}

// wait makes stream waiter wait for the work issued so far on stream
// source, through event ev.
func (c *call) wait(waiter, source, ev uintptr) bool {
	d := c.b.drv
	if err := d.call("cuEventRecord", d.cuEventRecord, ev, source); err != nil {
		c.fail(err)
		return false
	}
	if err := d.call("cuStreamWaitEvent", d.cuStreamWaitEvent, waiter, ev, 0); err != nil {
		c.fail(err)
		return false
	}
	return true
}

// blasOf is the cuBLAS handle of the stream ops go to: the backend's, or
// beside the side stream's own, made at the first product there with a
// workspace of its own (a handle is bound to one stream, and two products
// that run at once may not share a workspace). nil after a failure, which
// c records.
func (c *call) blasOf() *cublas {
	b, s := c.b, &c.b.side
	if !s.active {
		return b.blas
	}
	if s.blas == nil {
		ws, _, err := b.pool.get(cublasWorkspaceBytes)
		if err != nil {
			c.fail(err)
			return nil
		}
		h := *b.blas
		h.handle = 0
		if err := h.init(s.stream, ws, cublasWorkspaceBytes, b.opt.TF32); err != nil {
			c.fail(err)
			return nil
		}
		s.blas = &h
	}
	return s.blas
}

// releaseSide destroys the side stream, its events and its cuBLAS handle
// (at shutdown; the pool frees the handle's workspace).
func (b *Backend) releaseSide() {
	d, s := b.drv, &b.side
	if s.active {
		b.stream, s.active = s.main, false
	}
	if s.blas != nil && s.blas.handle != 0 {
		s.blas.call("cublasDestroy_v2", s.blas.destroy, s.blas.handle)
	}
	if s.stream != 0 {
		d.call("cuStreamDestroy_v2", d.cuStreamDestroy, s.stream)
	}
	for _, ev := range append([]uintptr{s.fork, s.join}, s.marks[:]...) {
		if ev != 0 {
			d.call("cuEventDestroy_v2", d.cuEventDestroy, ev)
		}
	}
	*s = sideQueue{}
}
