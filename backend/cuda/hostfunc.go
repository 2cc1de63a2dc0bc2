package cuda

import (
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.HostFuncs = (*Backend)(nil)

// hostFuncs are the Go functions the backend's streams run as host
// functions (cuLaunchHostFunc): one C callback for the backend, made on
// first use (purego callbacks are never released), whose user data names
// the function to run. A function issued eagerly runs once and is
// forgotten; one issued while capturing is a host node of the graph, run
// at every replay, and is kept while the graph lives: when the graph is
// closed its functions are retired, and dropped at the next Sync (replays
// enqueued before the Close still run them). The callback runs on a
// driver thread and may not call CUDA.
type hostFuncs struct {
	launch uintptr // cuLaunchHostFunc
	cb     uintptr // the C callback: void (*)(void *userData)

	mu      sync.Mutex
	fns     map[uintptr]hostFunc
	next    uintptr
	retired []uintptr // functions of closed graphs, dropped once the stream drains
}

type hostFunc struct {
	fn   func()
	keep bool // captured: run at every replay
}

// HostFunc runs fn on the host in the order of the stream's ops: after
// every op issued before it has finished, before any issued after it
// starts. While capturing it becomes a host node of the graph, run at each
// replay. fn may not call the backend (or CUDA).
func (b *Backend) HostFunc(fn func()) {
	c := b.begin("HostFunc")
	defer c.end()
	if !c.ok {
		return
	}
	h, err := b.hostFuncTable()
	if err != nil {
		c.fail(err)
		return
	}
	h.mu.Lock()
	h.next++
	id := h.next
	h.fns[id] = hostFunc{fn: fn, keep: b.capturing}
	h.mu.Unlock()
	if err := b.drv.call("cuLaunchHostFunc", h.launch, b.stream, h.cb, id); err != nil {
		h.forget([]uintptr{id})
		c.fail(err)
		return
	}
	if b.capturing {
		b.capHostFns = append(b.capHostFns, id)
	}
}

// hostFuncTable is the backend's table of host functions, made on first
// use (the caller holds the call).
func (b *Backend) hostFuncTable() (*hostFuncs, error) {
	if b.hostFns != nil {
		return b.hostFns, nil
	}
	h := &hostFuncs{fns: map[uintptr]hostFunc{}}
	if err := b.drv.lib.symbols(map[string]*uintptr{"cuLaunchHostFunc": &h.launch}); err != nil {
		return nil, fmt.Errorf("CUDA driver without host functions: %w", err)
	}
	h.cb = purego.NewCallback(h.run)
	b.hostFns = h
	return h, nil
}

// run is the callback: it runs the function id names, and forgets it
// unless a graph holds it.
func (h *hostFuncs) run(id uintptr) {
	h.mu.Lock()
	f, ok := h.fns[id]
	if ok && !f.keep {
		delete(h.fns, id)
	}
	h.mu.Unlock()
	if ok {
		f.fn()
	}
}

// forget drops the functions ids name.
func (h *hostFuncs) forget(ids []uintptr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		delete(h.fns, id)
	}
}

// retire marks the functions of a closed graph for dropping once no replay
// enqueued before the Close can still run them (dropRetired).
func (h *hostFuncs) retire(ids []uintptr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.retired = append(h.retired, ids...)
}

// dropRetired drops the retired functions; the caller has drained every
// stream that could run them.
func (h *hostFuncs) dropRetired() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range h.retired {
		delete(h.fns, id)
	}
	h.retired = h.retired[:0]
}

// live is how many functions the table holds.
func (h *hostFuncs) live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.fns)
}
