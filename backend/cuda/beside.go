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
}

// lane is the scratch row of the queue that ops go to.
func (s *sideQueue) lane() int {
	if s.active {
		return 1
	}
	return 0
}

// Beside issues fn's ops on the side stream: they wait for every op issued
// before and run beside the ops issued after Beside returns, until Join.
// Deferred launches (padding stashes, Adam and overflow queues) are
// flushed on their own stream on the way in and out. Beside may not nest.
func (b *Backend) Beside(fn func()) {
	c := b.begin("Beside")
	ok := c.ok && c.fork()
	c.end()
	fn()
	if !ok {
		return
	}
	c = b.beginAlways("Beside") // flushes the side's deferred launches on the side stream
	b.stream, b.side.active = b.side.main, false
	c.end()
}

// Join makes the ops issued after it wait for the side stream's work.
func (b *Backend) Join() {
	c := b.begin("Join")
	defer c.end()
	c.joinSide()
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
		s.open = false
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

// releaseSide destroys the side stream and its events (at shutdown).
func (b *Backend) releaseSide() {
	d, s := b.drv, &b.side
	if s.active {
		b.stream, s.active = s.main, false
	}
	if s.stream != 0 {
		d.call("cuStreamDestroy_v2", d.cuStreamDestroy, s.stream)
	}
	for _, ev := range []uintptr{s.fork, s.join} {
		if ev != 0 {
			d.call("cuEventDestroy_v2", d.cuEventDestroy, ev)
		}
	}
	*s = sideQueue{}
}
