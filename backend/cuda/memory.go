package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
	"github.com/fanout-gnn/fanout/graph"
)

// allocation is one block from the pool behind a buffer and its views.
type allocation struct {
	ptr   uintptr
	class int64 // pool size class
	bytes int64 // requested size (counted in InUseBytes)
	freed bool
	// hostPtr is set for host-mapped memory (UploadHost): pinned host
	// memory freed with cuMemFreeHost, not from the pool, not counted; or,
	// with registered set, the caller's memory registered in place
	// (cuMemHostUnregister), kept alive through data.
	hostPtr    uintptr
	registered bool
	data       any
	// paddingFree: declared by ScratchPadding (nobody reads the padding
	// rows of the whole buffer).
	paddingFree bool
}

// buffer is a typed device array: a whole allocation, or a view of one.
type buffer struct {
	ptr   uintptr // device address of element 0
	dt    backend.DType
	n     int
	root  *allocation // nil for zero-length buffers
	view  bool
	owner *Backend
}

// DType is the element type, 0 for a nil buffer.
func (x *buffer) DType() backend.DType {
	if x == nil {
		return 0
	}
	return x.dt
}

func (x *buffer) Len() int { return x.n }

// hostSlice describes a host slice passed to Upload, Write or Read.
func hostSlice(data any) (p unsafe.Pointer, n int, dt backend.DType, ok bool) {
	switch d := data.(type) {
	case []float32:
		return unsafe.Pointer(unsafe.SliceData(d)), len(d), backend.F32, true
	case []int32:
		return unsafe.Pointer(unsafe.SliceData(d)), len(d), backend.I32, true
	case []int64:
		return unsafe.Pointer(unsafe.SliceData(d)), len(d), backend.I64, true
	case []uint8:
		return unsafe.Pointer(unsafe.SliceData(d)), len(d), backend.U8, true
	case []uint16:
		return unsafe.Pointer(unsafe.SliceData(d)), len(d), backend.BF16, true
	}
	return nil, 0, 0, false
}

// alloc takes a block for n elements of dt from the pool (not zeroed).
func (c *call) alloc(dt backend.DType, n int) (*buffer, error) {
	b := c.b
	if dt.Size() == 0 {
		return nil, fmt.Errorf("cuda: %s: invalid dtype %d", c.op, dt)
	}
	if n < 0 {
		return nil, fmt.Errorf("cuda: %s: negative length %d", c.op, n)
	}
	if b.capturing {
		return nil, fmt.Errorf("cuda: %s: cannot allocate while capturing a graph", c.op)
	}
	x := &buffer{dt: dt, n: n, owner: b}
	if n == 0 {
		return x, nil
	}
	bytes := int64(n) * int64(dt.Size())
	ptr, class, err := b.pool.get(bytes)
	if err != nil {
		return nil, err
	}
	x.ptr = ptr
	x.root = &allocation{ptr: ptr, class: class, bytes: bytes}
	b.pool.account(bytes)
	return x, nil
}

// Alloc returns a zeroed buffer of n elements.
func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	c := b.beginAlways("Alloc")
	defer c.end()
	if b.closed {
		return nil, fmt.Errorf("cuda: Alloc: %w", errClosed)
	}
	x, err := c.alloc(dt, n)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		c.memset(x.ptr, 0, int64(n)*int64(dt.Size()))
	}
	return x, nil
}

// Upload copies data ([]float32, []int32, []int64 or []uint8) into a new
// buffer. The copy is staged before Upload returns, so the caller may reuse
// data at once.
func (b *Backend) Upload(data any) (backend.Buffer, error) {
	c := b.beginAlways("Upload")
	defer c.end()
	if b.closed {
		return nil, fmt.Errorf("cuda: Upload: %w", errClosed)
	}
	p, n, dt, ok := hostSlice(data)
	if !ok {
		return nil, fmt.Errorf("cuda: Upload: unsupported type %T", data)
	}
	x, err := c.alloc(dt, n)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		if err := c.copyIn(x.ptr, p, int64(n)*int64(dt.Size())); err != nil {
			b.release(x)
			return nil, fmt.Errorf("cuda: Upload: %w", err)
		}
	}
	return x, nil
}

// copyIn copies host memory to the device in stream order; the driver
// stages pageable memory before returning.
func (c *call) copyIn(dst uintptr, src unsafe.Pointer, bytes int64) error {
	b := c.b
	var pin runtime.Pinner
	pin.Pin(src)
	r, _, _ := purego.SyscallN(b.drv.cuMemcpyHtoDAsync, dst, uintptr(src), uintptr(bytes), b.stream)
	pin.Unpin()
	b.stats.CopiesHtoD++
	b.stats.BytesHtoD += bytes
	if code := int32(r); code != cudaSuccess {
		return b.drv.err("cuMemcpyHtoDAsync_v2", int(code))
	}
	return nil
}

// memset sets bytes of device memory to a repeated byte value (or 32-bit
// word when both address and size are multiples of 4).
func (c *call) memset(dst uintptr, v uint32, bytes int64) {
	b := c.b
	var r uintptr
	name := "cuMemsetD32Async"
	if dst%4 == 0 && bytes%4 == 0 {
		r, _, _ = purego.SyscallN(b.drv.cuMemsetD32Async, dst, uintptr(v), uintptr(bytes/4), b.stream)
	} else {
		name = "cuMemsetD8Async"
		r, _, _ = purego.SyscallN(b.drv.cuMemsetD8Async, dst, uintptr(v&0xff), uintptr(bytes), b.stream)
	}
	b.stats.Memsets++
	if code := int32(r); code != cudaSuccess {
		c.fail(b.drv.err(name, int(code)))
	}
}

// View is elements [off, off+n) of buf, sharing its memory. A range outside
// buf is recorded as an error and yields an empty view.
func (b *Backend) View(buf backend.Buffer, off, n int) backend.Buffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	x, ok := buf.(*buffer)
	if !ok || x == nil || x.owner != b {
		b.fail(fmt.Errorf("cuda: View: %s", describeForeign(buf)))
		return &buffer{owner: b, dt: backend.F32}
	}
	if off < 0 || n < 0 || off+n > x.n {
		b.fail(fmt.Errorf("cuda: View: range [%d, %d) outside buffer of %d elements", off, off+n, x.n))
		return &buffer{owner: b, dt: x.dt, root: x.root, view: true}
	}
	return &buffer{ptr: x.ptr + uintptr(off*x.dt.Size()), dt: x.dt, n: n, root: x.root, view: true, owner: b}
}

// Free returns a buffer made by Alloc or Upload to the pool. Views need no
// Free (freeing one does nothing).
func (b *Backend) Free(buf backend.Buffer) {
	b.mu.Lock()
	deferred := !b.closed && b.hasDeferred()
	b.mu.Unlock()
	if deferred {
		c := b.beginAlways("Free") // launches deferred work that may touch buf
		c.end()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if isNil(buf) {
		return
	}
	x, ok := buf.(*buffer)
	if !ok || x.owner != b {
		b.fail(fmt.Errorf("cuda: Free: %s", describeForeign(buf)))
		return
	}
	if x.view || x.root == nil || b.closed {
		return
	}
	if x.root.freed {
		b.fail(fmt.Errorf("cuda: Free: buffer freed twice"))
		return
	}
	b.release(x)
}

// release returns x's block to the pool (the lock is held).
func (b *Backend) release(x *buffer) {
	x.root.freed = true
	if x.root.registered {
		delete(b.registered, x.root)
		if err := b.drv.call("cuMemHostUnregister", b.drv.cuMemHostUnregister, x.root.hostPtr); err != nil {
			b.fail(fmt.Errorf("cuda: Free: %w", err))
		}
		x.root.data = nil
		return
	}
	if x.root.hostPtr != 0 {
		if err := b.drv.call("cuMemFreeHost", b.drv.cuMemFreeHost, x.root.hostPtr); err != nil {
			b.fail(fmt.Errorf("cuda: Free: %w", err))
		}
		return
	}
	b.pool.put(x.root.ptr, x.root.class)
	b.pool.account(-x.root.bytes)
}

// Write copies src (a slice of buf's element type) into buf at element off.
func (b *Backend) Write(buf backend.Buffer, off int, src any) {
	c := b.begin("Write")
	defer c.end()
	x, p, n, dt, ok := c.hostCopy(buf, src, off, "write host data")
	if !ok {
		return
	}
	if n == 0 {
		return
	}
	if err := c.copyIn(x.ptr+uintptr(off*dt.Size()), p, int64(n)*int64(dt.Size())); err != nil {
		c.fail(err)
	}
}

// hostCopy checks a copy between the host slice h and elements [off,
// off+len(h)) of buf, and that no graph is being captured (verb names the
// refused action). It records the failure and returns ok = false otherwise.
func (c *call) hostCopy(buf backend.Buffer, h any, off int, verb string) (x *buffer, p unsafe.Pointer, n int, dt backend.DType, ok bool) {
	p, n, dt, ok = hostSlice(h)
	if !ok {
		c.failf("unsupported type %T", h)
		return nil, nil, 0, 0, false
	}
	if x = c.buf("buf", buf, dt, 0); x == nil {
		return nil, nil, 0, 0, false
	}
	if off < 0 || off+n > x.n {
		c.failf("elements [%d, %d) outside buffer of %d", off, off+n, x.n)
		return nil, nil, 0, 0, false
	}
	if c.b.capturing {
		c.failf("cannot %s while capturing a graph", verb)
		return nil, nil, 0, 0, false
	}
	return x, p, n, dt, true
}

// Read copies elements of buf from off into dst (a slice of buf's element
// type), waiting for pending ops. It runs even after a failure, so that
// values written before it can be inspected.
func (b *Backend) Read(dst any, buf backend.Buffer, off int) {
	c := b.beginAlways("Read")
	defer c.end()
	x, p, n, dt, ok := c.hostCopy(buf, dst, off, "read")
	if !ok {
		return
	}
	c.joinSide()
	bytes := int64(n) * int64(dt.Size())
	var pin runtime.Pinner
	pin.Pin(p)
	defer pin.Unpin()
	if n > 0 {
		r, _, _ := purego.SyscallN(b.drv.cuMemcpyDtoHAsync, uintptr(p), x.ptr+uintptr(off*dt.Size()), uintptr(bytes), b.stream)
		b.stats.CopiesDtoH++
		b.stats.BytesDtoH += bytes
		if code := int32(r); code != cudaSuccess {
			c.fail(b.drv.err("cuMemcpyDtoHAsync_v2", int(code)))
			return
		}
	}
	c.streamSync()
}

// streamSync waits for the stream.
func (c *call) streamSync() {
	b := c.b
	r, _, _ := purego.SyscallN(b.drv.cuStreamSynchronize, b.stream)
	b.stats.HostSyncs++
	if code := int32(r); code != cudaSuccess {
		c.fail(b.drv.err("cuStreamSynchronize", int(code)))
	}
}

// Fill sets every element of buf to v converted to its type.
func (b *Backend) Fill(buf backend.Buffer, v float64) {
	c := b.begin("Fill")
	defer c.end()
	x, ok := buf.(*buffer)
	if !ok || x == nil {
		c.failf("buf: %s", describeForeign(buf))
		return
	}
	if x = c.buf("buf", buf, x.dt, 0); x == nil || x.n == 0 {
		return
	}
	bytes := int64(x.n) * int64(x.dt.Size())
	switch x.dt {
	case backend.F32:
		c.memset(x.ptr, math.Float32bits(float32(v)), bytes)
	case backend.I32:
		c.memset(x.ptr, uint32(int32(v)), bytes)
	case backend.U8:
		c.memset(x.ptr, uint32(uint8(v)), bytes)
	case backend.BF16:
		h := uint32(backend.BF16Bits(float32(v)))
		if (bytes%4 != 0 || x.ptr%4 != 0) && h>>8 != h&0xff {
			c.failf("Fill: a bfloat16 buffer of odd length takes only values whose two bytes are equal (0)")
			return
		}
		c.memset(x.ptr, h|h<<16, bytes)
	case backend.I64:
		c.args().ptr(x.ptr).i64(int64(x.n)).i64(int64(v))
		c.launch("fill_u64", d1(c.blocks(int64(x.n), 256)), d1(256), 0)
	}
}

// Sync waits for all pending ops and returns the first error recorded, by
// the host or by a kernel (bad ids, labels or steps).
func (b *Backend) Sync() error {
	c := b.beginAlways("Sync")
	defer c.end()
	if b.err != nil || b.closed {
		return b.err
	}
	if b.capturing {
		c.failf("cannot synchronise while capturing a graph")
		return b.err
	}
	c.joinSide()
	d := b.drv
	r, _, _ := purego.SyscallN(d.cuMemcpyDtoHAsync, b.host+hostErrOff, b.errDev, 16, b.stream)
	if code := int32(r); code != cudaSuccess {
		c.fail(d.err("cuMemcpyDtoHAsync_v2", int(code)))
		return b.err
	}
	c.streamSync()
	if b.hostFns != nil && b.err == nil {
		b.hostFns.dropRetired() // the stream has drained: no replay runs them now
	}
	if b.err == nil {
		if code := b.hostInt32(hostErrOff, 0); code != 0 {
			// A kernel's error record: its code and values (kernels/errors.cuh).
			rec := func(i int) int64 { return int64(b.hostInt32(hostErrOff, i)) }
			b.fail(errcode.Code(code).Err("cuda", rec(1), rec(2), rec(3)))
		}
	}
	return b.err
}

// devGraph is topology resident on the device, plus the relabelling table.
type devGraph struct {
	owner    *Backend
	numNodes int64
	numEdges int64
	indptr   *buffer // I64 [N+1]
	indices  *buffer // I32 [E]
	relmap   *buffer // I64 [N]: Relabel's tag<<32 | first position per vertex
	relState *buffer // I32 [2]: Relabel's generation and block counter
	skip     *buffer // I32 [N] in a MaskGraph view, else nil
	// A PeerGraph has no indptr and indices: every vertex's list is at
	// its own address (here or in a peer's memory), with its degree and
	// where it lives; SampleLayer adds the reads by kind to reads.
	rowAddr, rowDeg, kind, reads *buffer // I64 [N], I32 [N], U8 [N], I64 [backend.ListKinds]
}

func (g *devGraph) NumNodes() int64 { return g.numNodes }
func (g *devGraph) NumEdges() int64 { return g.numEdges }

// UploadGraph copies the CSR to the device (int32 indices only) and
// allocates Relabel's per-vertex table (8 bytes per vertex). The memory
// counts in InUseBytes; FreeGraph releases it.
func (b *Backend) UploadGraph(csr *graph.CSR) (backend.Graph, error) {
	c := b.beginAlways("UploadGraph")
	defer c.end()
	if b.closed {
		return nil, fmt.Errorf("cuda: UploadGraph: %w", errClosed)
	}
	if csr == nil {
		return nil, fmt.Errorf("cuda: UploadGraph: nil graph")
	}
	if err := csr.Narrow(); err != nil {
		return nil, fmt.Errorf("cuda: UploadGraph: %w", err)
	}
	if int64(len(csr.Indptr)) != csr.NumNodes+1 || int64(len(csr.Indices)) < csr.NumEdges() {
		return nil, fmt.Errorf("cuda: UploadGraph: indptr has %d entries for %d vertices, indices %d for %d edges",
			len(csr.Indptr), csr.NumNodes, len(csr.Indices), csr.NumEdges())
	}
	g := &devGraph{owner: b, numNodes: csr.NumNodes, numEdges: csr.NumEdges()}
	var err error
	free := func() {
		for _, x := range []*buffer{g.indptr, g.indices, g.relmap, g.relState} {
			if x != nil && x.root != nil {
				b.release(x)
			}
		}
	}
	if g.indptr, err = c.alloc(backend.I64, len(csr.Indptr)); err == nil {
		err = c.copyIn(g.indptr.ptr, unsafe.Pointer(unsafe.SliceData(csr.Indptr)), int64(len(csr.Indptr))*8)
	}
	if err == nil {
		if g.indices, err = c.alloc(backend.I32, int(g.numEdges)); err == nil && g.numEdges > 0 {
			err = c.copyIn(g.indices.ptr, unsafe.Pointer(unsafe.SliceData(csr.Indices)), g.numEdges*4)
		}
	}
	if err == nil {
		if g.relmap, err = c.alloc(backend.I64, int(g.numNodes)); err == nil && g.numNodes > 0 {
			c.memset(g.relmap.ptr, math.MaxUint32, g.numNodes*8)
		}
	}
	if err == nil {
		if g.relState, err = c.alloc(backend.I32, 2); err == nil {
			c.memset(g.relState.ptr, 0, 8)
		}
	}
	if err != nil {
		free()
		return nil, fmt.Errorf("cuda: UploadGraph: %w", err)
	}
	return g, nil
}

// FreeGraph releases a graph made by UploadGraph.
func (b *Backend) FreeGraph(g backend.Graph) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dg, ok := g.(*devGraph)
	if !ok || dg == nil || dg.owner != b || b.closed {
		return
	}
	for _, x := range []*buffer{dg.indptr, dg.indices, dg.relmap, dg.relState, dg.rowAddr, dg.rowDeg, dg.kind, dg.reads} {
		if x != nil && x.root != nil && !x.root.freed {
			b.release(x)
		}
	}
}

// graph validates a Graph argument.
func (c *call) graph(name string, g backend.Graph) *devGraph {
	if !c.ok {
		return nil
	}
	dg, ok := g.(*devGraph)
	if !ok || dg == nil || dg.owner != c.b {
		c.failf("%s: graph of type %T does not belong to this cuda backend", name, g)
		return nil
	}
	for _, x := range []*buffer{dg.indptr, dg.rowAddr} {
		if x != nil && x.root != nil && x.root.freed {
			c.failf("%s: graph used after FreeGraph", name)
			return nil
		}
	}
	return dg
}
