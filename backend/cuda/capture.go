package cuda

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
)

// Graph capture: the replay mode records one step's launches from the
// backend's stream into a CUDA graph and replays it. While capturing, ops
// are recorded, not run; Alloc, Upload, Write, Read, Sync and Mark are
// refused, and the Linear ops multiply whole capacities (see linear.go).
//
// Scratch. Some ops use the backend's scratch memory (scan state, relabel
// positions, column-sum and loss partials, the Linear ops' padding stash),
// grown on demand. A captured graph keeps the addresses it was recorded
// with, so a scratch block used by a graph is never handed out again while
// the graph lives: when an op outgrows it, the block is retired (kept) until
// every graph that uses it is closed. Growing scratch while capturing
// allocates device memory inside the capture (allowed in the relaxed mode,
// counted in Stats.CaptureAllocs); to keep allocation out of the captured
// step, run the step once eagerly with Options.CapacityGemm set (the
// Linear ops' capacity path needs a padding stash the exact path does not)
// and with the capacities the capture will use. Capture uses the relaxed
// mode, because the calls of one capture may come from different OS threads.

var (
	_ backend.Capturer = (*Backend)(nil)
	_ backend.Timer    = (*Backend)(nil)
)

// Captured is an instantiated CUDA graph; it implements backend.Replay.
type Captured struct {
	b           *Backend
	graph, exec uintptr
	scratch     []uintptr // scratch blocks the graph's nodes use
	hostFns     []uintptr // its host nodes' functions in the backend's table
}

// BeginCapture starts recording the stream.
func (b *Backend) BeginCapture() error {
	c := b.begin("BeginCapture")
	defer c.end()
	if !c.ok {
		return b.err
	}
	if b.capturing {
		return fmt.Errorf("cuda: BeginCapture: already capturing")
	}
	c.joinSide()
	if err := b.drv.call("cuStreamBeginCapture_v2", b.drv.cuStreamBeginCapture, b.stream, captureModeRelaxed); err != nil {
		return err
	}
	b.capturing = true
	b.capScratch = map[uintptr]bool{}
	return nil
}

// EndCapture stops recording and instantiates the graph (a *Captured).
// When an op failed during capture, the graph is discarded and the sticky
// error returned.
func (b *Backend) EndCapture() (backend.Replay, error) {
	c := b.beginAlways("EndCapture")
	defer c.end()
	if !b.capturing {
		return nil, fmt.Errorf("cuda: EndCapture: not capturing")
	}
	c.joinSide()
	b.capturing = false
	used := b.capScratch
	b.capScratch = nil
	d := b.drv
	g := &Captured{b: b, hostFns: b.capHostFns}
	b.capHostFns = nil
	err := d.call("cuStreamEndCapture", d.cuStreamEndCapture, b.stream, uintptr(unsafe.Pointer(&g.graph)))
	if err == nil && b.err != nil {
		err = b.err
	}
	if err == nil {
		err = d.call("cuGraphInstantiateWithFlags", d.cuGraphInstantiateWithFlags, uintptr(unsafe.Pointer(&g.exec)), g.graph, 0)
	}
	if err != nil {
		if g.graph != 0 {
			d.call("cuGraphDestroy", d.cuGraphDestroy, g.graph)
		}
		if b.hostFns != nil {
			b.hostFns.forget(g.hostFns) // never launched
		}
		b.releaseRetired()
		return nil, err
	}
	for p := range used {
		b.graphRefs[p]++
		g.scratch = append(g.scratch, p)
	}
	return g, nil
}

// Launch enqueues one replay of the graph on the backend's stream (counted
// as one launch in Stats).
func (g *Captured) Launch() {
	c := g.b.begin("Captured.Launch")
	defer c.end()
	if !c.ok {
		return
	}
	if g.exec == 0 {
		c.failf("graph was closed")
		return
	}
	r, _, _ := purego.SyscallN(g.b.drv.cuGraphLaunch, g.exec, g.b.stream)
	if code := int32(r); code != cudaSuccess {
		c.fail(g.b.drv.err("cuGraphLaunch", int(code)))
	}
	g.b.stats.Launches++
}

// Close releases the graph and the scratch blocks only it kept. Replays
// already enqueued finish first (the driver defers the release).
func (g *Captured) Close() error {
	c := g.b.beginAlways("Captured.Close")
	defer c.end()
	b, d := g.b, g.b.drv
	if b.closed {
		return nil
	}
	var first error
	if g.exec != 0 {
		first = d.call("cuGraphExecDestroy", d.cuGraphExecDestroy, g.exec)
		g.exec = 0
	}
	if g.graph != 0 {
		if err := d.call("cuGraphDestroy", d.cuGraphDestroy, g.graph); first == nil {
			first = err
		}
		g.graph = 0
	}
	for _, p := range g.scratch {
		if b.graphRefs[p]--; b.graphRefs[p] <= 0 {
			delete(b.graphRefs, p)
		}
	}
	g.scratch = nil
	if len(g.hostFns) > 0 {
		b.hostFns.retire(g.hostFns)
		g.hostFns = nil
	}
	b.releaseRetired()
	return first
}

// releaseRetired returns to the pool the retired scratch blocks that no
// live graph (nor the capture in progress) uses. The stream keeps their
// last uses ordered before any later use of the pool's blocks.
func (b *Backend) releaseRetired() {
	keep := b.retired[:0]
	for _, s := range b.retired {
		if b.graphRefs[s.ptr] > 0 || b.capScratch[s.ptr] {
			keep = append(keep, s)
			continue
		}
		b.pool.put(s.ptr, s.class)
	}
	clear(b.retired[len(keep):])
	b.retired = keep
}

// Event is a CUDA event recorded on the backend's stream, for timing; it
// implements backend.Mark.
type Event struct {
	b  *Backend
	ev uintptr
}

// Mark records an event at the current end of the stream (backend.Timer).
// Events are reused after Close. Refused while capturing.
func (b *Backend) Mark() (backend.Mark, error) {
	c := b.beginAlways("Mark")
	defer c.end()
	if b.closed {
		return nil, fmt.Errorf("cuda: Mark: %w", errClosed)
	}
	if b.capturing {
		return nil, fmt.Errorf("cuda: Mark: cannot time while capturing a graph")
	}
	d := b.drv
	e := &Event{b: b}
	if n := len(b.events); n > 0 {
		e.ev, b.events = b.events[n-1], b.events[:n-1]
	} else if err := d.call("cuEventCreate", d.cuEventCreate, uintptr(unsafe.Pointer(&e.ev)), eventDefault); err != nil {
		return nil, err
	}
	r, _, _ := purego.SyscallN(d.cuEventRecord, e.ev, b.stream)
	if code := int32(r); code != cudaSuccess {
		d.call("cuEventDestroy_v2", d.cuEventDestroy, e.ev)
		return nil, d.err("cuEventRecord", int(code))
	}
	return e, nil
}

// Since waits for e (without holding the backend, so other goroutines may
// keep issuing work) and returns the device time from earlier to e.
func (e *Event) Since(earlier backend.Mark) (time.Duration, error) {
	a, ok := earlier.(*Event)
	if !ok || a == nil || a.b != e.b {
		return 0, fmt.Errorf("cuda: Mark.Since: earlier mark %T is not from this backend", earlier)
	}
	b, d := e.b, e.b.drv
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.mu.Lock()
	ctx, ev, closed := b.ctx, e.ev, b.closed
	b.mu.Unlock()
	if closed || ev == 0 || a.ev == 0 {
		return 0, fmt.Errorf("cuda: Mark.Since: mark or backend closed")
	}
	if err := d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, ctx); err != nil {
		return 0, err
	}
	if err := d.call("cuEventSynchronize", d.cuEventSynchronize, ev); err != nil {
		return 0, err
	}
	c := b.beginAlways("Mark.Since")
	defer c.end()
	b.stats.HostSyncs++
	var ms float32
	if err := d.call("cuEventElapsedTime", d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), a.ev, e.ev); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Close gives the event back for reuse by a later Mark.
func (e *Event) Close() {
	c := e.b.beginAlways("Mark.Close")
	defer c.end()
	if e.ev != 0 && !e.b.closed {
		e.b.events = append(e.b.events, e.ev)
	}
	e.ev = 0
}
