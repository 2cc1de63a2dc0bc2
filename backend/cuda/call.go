package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

var errClosed = errors.New("backend is closed")

// call is one public method in progress: it holds the backend's lock, the
// goroutine's OS thread and the current context, and validates arguments.
// The first problem is recorded as the backend's sticky error naming the op;
// ok reports whether everything so far passed.
type call struct {
	b  *Backend
	op string
	ok bool
}

// begin starts an op; the caller must defer c.end(). Ops issued after a
// failure are skipped (ok is false from the start).
func (b *Backend) begin(op string) call {
	c := b.beginAlways(op)
	if c.ok && b.err != nil {
		c.ok = false
	}
	return c
}

// beginAlways starts a method that runs even after a failure (memory
// management, Read, Sync).
func (b *Backend) beginAlways(op string) call {
	runtime.LockOSThread()
	b.mu.Lock()
	c := call{b: b, op: op, ok: true}
	if b.closed {
		c.ok = false
		b.fail(fmt.Errorf("cuda: %s: %w", op, errClosed))
		return c
	}
	r, _, _ := purego.SyscallN(b.drv.cuCtxSetCurrent, b.ctx)
	if code := int32(r); code != cudaSuccess {
		c.fail(b.drv.err("cuCtxSetCurrent", int(code)))
	}
	if c.ok && b.hasDeferred() {
		c.flushDeferred()
	}
	return c
}

func (c *call) end() {
	c.b.mu.Unlock()
	runtime.UnlockOSThread()
}

// fail records err (naming the op) as the sticky error.
func (c *call) fail(err error) {
	if c.ok {
		c.ok = false
		c.b.fail(fmt.Errorf("cuda: %s: %w", c.op, err))
	}
}

func (c *call) failf(format string, args ...any) {
	c.fail(fmt.Errorf(format, args...))
}

// fail keeps the first error.
func (b *Backend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// scratch returns at least bytes of the backend's scratch slot, growing it
// when needed. A block that a captured graph (or the capture in progress)
// uses is not handed out again while the graph lives: when it is outgrown
// it is retired, and given back by Captured.Close (see capture.go).
func (c *call) scratch(slot int, bytes int64) uintptr {
	if !c.ok {
		return 0
	}
	b := c.b
	s := &b.scratch[b.side.lane()][slot]
	if s.ptr == 0 || s.class < bytes {
		if s.ptr != 0 {
			if b.graphRefs[s.ptr] > 0 || b.capScratch[s.ptr] {
				b.retired = append(b.retired, *s)
			} else {
				b.pool.put(s.ptr, s.class)
			}
			s.ptr, s.class = 0, 0
		}
		ptr, class, err := b.pool.get(bytes)
		if err != nil {
			c.fail(err)
			return 0
		}
		s.ptr, s.class = ptr, class
		if b.capturing {
			b.stats.CaptureAllocs++
		}
	}
	if b.capturing {
		b.capScratch[s.ptr] = true
	}
	return s.ptr
}

// scratchZeroed is scratch whose memory is zeroed whenever it is (re)made.
func (c *call) scratchZeroed(slot int, bytes int64) uintptr {
	s := &c.b.scratch[c.b.side.lane()][slot]
	grow := s.ptr == 0 || s.class < bytes
	p := c.scratch(slot, bytes)
	if grow && p != 0 {
		c.memset(p, 0, s.class)
	}
	return p
}

// maxKernelArgs bounds the parameters of any kernel here.
const maxKernelArgs = 24

// maxStructArgBytes bounds the bytes of struct parameters of one launch.
const maxStructArgBytes = 2048

// argPack holds the parameters of one launch: each value in its own 8-byte
// slot (4-byte values in the low half, which is where a little-endian read
// of their real size finds them), structs passed by value in raw, and the
// pointer array cuLaunchKernel takes.
type argPack struct {
	vals   [maxKernelArgs]uint64
	rawOff [maxKernelArgs]int // offset of the parameter in raw, or -1
	raw    [maxStructArgBytes]byte
	rawN   int
	ptrs   [maxKernelArgs]uintptr
	n      int
}

// args starts the parameter list of the next launch.
func (c *call) args() *argPack {
	c.b.pack.n, c.b.pack.rawN = 0, 0
	return c.b.pack
}

func (a *argPack) put(v uint64) *argPack {
	a.vals[a.n] = v
	a.rawOff[a.n] = -1
	a.n++
	return a
}

// bytes adds a struct parameter passed by value: its bytes laid out as the
// kernel's struct (little-endian, C alignment), placed at a 16-byte aligned
// offset. The caller keeps the total under maxStructArgBytes.
func (a *argPack) bytes(v []byte) *argPack {
	off := (a.rawN + 15) &^ 15
	copy(a.raw[off:], v)
	a.rawN = off + len(v)
	a.rawOff[a.n] = off
	a.n++
	return a
}

func (a *argPack) ptr(p uintptr) *argPack { return a.put(uint64(p)) }
func (a *argPack) i32(v int) *argPack     { return a.put(uint64(uint32(int32(v)))) }
func (a *argPack) u32(v uint32) *argPack  { return a.put(uint64(v)) }
func (a *argPack) f32(v float32) *argPack { return a.put(uint64(math.Float32bits(v))) }
func (a *argPack) i64(v int64) *argPack   { return a.put(uint64(v)) }
func (a *argPack) flag(v bool) *argPack {
	if v {
		return a.i32(1)
	}
	return a.i32(0)
}

// dim3 is a launch shape.
type dim3 struct{ x, y, z uint32 }

func d1(x uint32) dim3 { return dim3{x, 1, 1} }

// launch issues kernel name with the parameters built by args.
func (c *call) launch(name string, grid, block dim3, smem int) {
	if !c.ok {
		return
	}
	b := c.b
	fn, ok := b.kernel(name)
	if !ok {
		c.failf("kernel %s is not loaded", name)
		return
	}
	a := b.pack
	for i := 0; i < a.n; i++ {
		if off := a.rawOff[i]; off >= 0 {
			a.ptrs[i] = uintptr(unsafe.Pointer(&a.raw[off]))
		} else {
			a.ptrs[i] = uintptr(unsafe.Pointer(&a.vals[i]))
		}
	}
	b.pin.Pin(a)
	r, _, _ := purego.SyscallN(b.drv.cuLaunchKernel, fn, uintptr(grid.x), uintptr(grid.y), uintptr(grid.z),
		uintptr(block.x), uintptr(block.y), uintptr(block.z), uintptr(smem), b.stream, uintptr(unsafe.Pointer(&a.ptrs[0])), 0)
	b.pin.Unpin()
	b.stats.Launches++
	if code := int32(r); code != cudaSuccess {
		c.fail(b.drv.err("cuLaunchKernel("+name+")", int(code)))
	}
}

// blocks is the grid size for work items of which each block takes
// perBlock, capped at 32 blocks per multiprocessor (kernels loop).
func (c *call) blocks(work int64, perBlock int) uint32 {
	g := (work + int64(perBlock) - 1) / int64(perBlock)
	if lim := int64(c.b.dev.sms) * 32; g > lim {
		g = lim
	}
	if g < 1 {
		g = 1
	}
	return uint32(g)
}

// residentKey is a kernel and its launch shape, for residentBlocks.
type residentKey struct {
	fn            uintptr
	threads, smem int
}

// residentBlocks is the blocks of threads threads and smem bytes of
// dynamic shared memory that all multiprocessors together hold at once for
// kernel name (the driver's occupancy for its registers and shared
// memory), at least one per multiprocessor: a grid of that many blocks
// runs in one wave. Cached per kernel and shape.
func (c *call) residentBlocks(name string, threads, smem int) int {
	b := c.b
	fn, ok := b.kernel(name)
	if !c.ok || !ok {
		return b.dev.sms
	}
	k := residentKey{fn, threads, smem}
	if n, ok := b.resident[k]; ok {
		return n
	}
	var per int32
	if err := b.drv.call("cuOccupancyMaxActiveBlocksPerMultiprocessor", b.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor,
		uintptr(unsafe.Pointer(&per)), fn, uintptr(threads), uintptr(smem)); err != nil {
		c.fail(err)
		return b.dev.sms
	}
	n := max(1, int(per)) * b.dev.sms
	b.resident[k] = n
	return n
}

// setSmem raises a kernel's dynamic shared memory limit when it needs more
// than the default 48 KiB.
func (c *call) setSmem(name string, bytes int) {
	if !c.ok || bytes <= 48<<10 {
		return
	}
	b := c.b
	fn, _ := b.kernel(name)
	if b.smemSet[fn] >= bytes {
		return
	}
	if bytes > b.dev.smemOptin {
		c.failf("kernel %s needs %d bytes of shared memory, the device allows %d", name, bytes, b.dev.smemOptin)
		return
	}
	if err := b.drv.call("cuFuncSetAttribute", b.drv.cuFuncSetAttribute, fn, funcAttrMaxDynamicShared, uintptr(bytes)); err != nil {
		c.fail(err)
		return
	}
	b.smemSet[fn] = bytes
}
