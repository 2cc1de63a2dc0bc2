package cuda

import (
	"fmt"
	"time"
	"unsafe"
)

// Graph capture: the replay mode records one step's launches from the
// backend's stream into a CUDA graph and replays it. While capturing, ops
// are recorded, not run; Alloc, Upload, Read and Sync are refused, the
// Linear ops multiply whole capacities (see linear.go), and scratch memory
// that grows during a capture is not reused afterwards (see call.scratch);
// running the step once eagerly with CapacityGemm set before capturing sizes
// it all in advance. Capture uses the relaxed mode, because the calls of
// one capture may come from different OS threads.

// Captured is an instantiated CUDA graph.
type Captured struct {
	b           *Backend
	graph, exec uintptr
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
	if err := b.drv.call("cuStreamBeginCapture_v2", b.drv.cuStreamBeginCapture, b.stream, captureModeRelaxed); err != nil {
		return err
	}
	b.capturing = true
	return nil
}

// EndCapture stops recording and instantiates the graph. When an op failed
// during capture, the graph is discarded and the sticky error returned.
func (b *Backend) EndCapture() (*Captured, error) {
	c := b.beginAlways("EndCapture")
	defer c.end()
	if !b.capturing {
		return nil, fmt.Errorf("cuda: EndCapture: not capturing")
	}
	b.capturing = false
	d := b.drv
	g := &Captured{b: b}
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
		return nil, err
	}
	return g, nil
}

// Launch enqueues one replay of the graph on the backend's stream.
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
	if err := g.b.drv.call("cuGraphLaunch", g.b.drv.cuGraphLaunch, g.exec, g.b.stream); err != nil {
		c.fail(err)
	}
	g.b.stats.Launches++
}

// Close releases the graph.
func (g *Captured) Close() {
	c := g.b.beginAlways("Captured.Close")
	defer c.end()
	d := g.b.drv
	if g.exec != 0 {
		d.call("cuGraphExecDestroy", d.cuGraphExecDestroy, g.exec)
		g.exec = 0
	}
	if g.graph != 0 {
		d.call("cuGraphDestroy", d.cuGraphDestroy, g.graph)
		g.graph = 0
	}
}

// Event is a CUDA event recorded on the backend's stream, for timing.
type Event struct {
	b  *Backend
	ev uintptr
}

// Record records a new event at the current end of the stream.
func (b *Backend) Record() (*Event, error) {
	c := b.beginAlways("Record")
	defer c.end()
	e := &Event{b: b}
	d := b.drv
	if err := d.call("cuEventCreate", d.cuEventCreate, uintptr(unsafe.Pointer(&e.ev)), eventDefault); err != nil {
		return nil, err
	}
	if err := d.call("cuEventRecord", d.cuEventRecord, e.ev, b.stream); err != nil {
		d.call("cuEventDestroy_v2", d.cuEventDestroy, e.ev)
		return nil, err
	}
	return e, nil
}

// Elapsed waits for later and returns the device time between e and later.
func (e *Event) Elapsed(later *Event) (time.Duration, error) {
	c := e.b.beginAlways("Event.Elapsed")
	defer c.end()
	d := e.b.drv
	if err := d.call("cuEventSynchronize", d.cuEventSynchronize, later.ev); err != nil {
		return 0, err
	}
	e.b.stats.HostSyncs++
	var ms float32
	if err := d.call("cuEventElapsedTime", d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), e.ev, later.ev); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Close releases the event.
func (e *Event) Close() {
	c := e.b.beginAlways("Event.Close")
	defer c.end()
	if e.ev != 0 {
		e.b.drv.call("cuEventDestroy_v2", e.b.drv.cuEventDestroy, e.ev)
		e.ev = 0
	}
}
