package cuda

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The argument checks the ops' generated checkers (<file>_gen.go, from
// backend/ops) are made of. Each records the first failure as the call's
// sticky error, naming the argument, and does nothing after one.

// buf returns the CUDA buffer behind arg, or nil (recording an error) when it
// is missing, foreign, freed, of the wrong type or shorter than need.
func (c *call) buf(name string, arg backend.Buffer, dt backend.DType, need int) *buffer {
	if !c.ok {
		return nil
	}
	x, ok := arg.(*buffer)
	switch {
	case !ok || x == nil:
		c.failf("%s: %s", name, describeForeign(arg))
	case x.owner != c.b:
		c.failf("%s: buffer belongs to another CUDA backend", name)
	case x.root != nil && x.root.freed:
		c.failf("%s: buffer used after Free", name)
	case x.dt != dt:
		c.failf("%s: dtype %s, want %s", name, x.dt, dt)
	case x.n < need:
		c.failf("%s: buffer has %d elements, need %d", name, x.n, need)
	default:
		return x
	}
	return nil
}

// overlaps reports whether two buffers share device memory.
func (x *buffer) overlaps(o *buffer) bool {
	end := func(b *buffer) uintptr { return b.ptr + uintptr(b.n*b.dt.Size()) }
	return x.ptr < end(o) && o.ptr < end(x)
}

// typed is buf for an argument that may have any of the types dts: its own
// type when that is one of them.
func (c *call) typed(name string, arg backend.Buffer, need int, dts ...backend.DType) *buffer {
	x, _ := arg.(*buffer)
	return c.buf(name, arg, backend.TypeAmong(x.DType(), dts...), need)
}

// optBuf is buf for an argument that may be nil (returns nil, no error).
func (c *call) optBuf(name string, arg backend.Buffer, dt backend.DType, need int) *buffer {
	if isNil(arg) {
		return nil
	}
	return c.buf(name, arg, dt, need)
}

func isNil(arg backend.Buffer) bool {
	if arg == nil {
		return true
	}
	x, ok := arg.(*buffer)
	return ok && x == nil
}

func describeForeign(arg backend.Buffer) string {
	if isNil(arg) {
		return "nil buffer"
	}
	return fmt.Sprintf("buffer of type %T does not belong to the cuda backend", arg)
}

// ptr is the device address of x, 0 for nil.
func (x *buffer) addr() uintptr {
	if x == nil {
		return 0
	}
	return x.ptr
}

// count validates a Count and returns the device address of its int32.
func (c *call) count(name string, n backend.Count) uintptr {
	if !c.ok {
		return 0
	}
	if n.Cap < 0 || n.Cap > math.MaxInt32-1 {
		c.failf("%s: capacity %d outside [0, 2^31-1)", name, n.Cap)
		return 0
	}
	return c.counter(name, n)
}

// counter validates an int32 in device memory whose Cap is not used (a
// counter an op writes or adds to) and returns its address.
func (c *call) counter(name string, n backend.Count) uintptr {
	x := c.buf(name+".Buf", n.Buf, backend.I32, 0)
	if x == nil {
		return 0
	}
	if n.Off < 0 || n.Off >= x.n {
		c.failf("%s: offset %d outside count buffer of %d elements", name, n.Off, x.n)
		return 0
	}
	return x.ptr + uintptr(4*n.Off)
}

// check records err (a shared check of package backend) when it is set.
func (c *call) check(err error) {
	if c.ok && err != nil {
		c.failf("%v", err)
	}
}

// flag checks an optional I32 flag (element 0; nil: none).
func (c *call) flag(name string, arg backend.Buffer) *buffer {
	return c.optBuf(name, arg, backend.I32, 1)
}

// notNil checks a block an op writes into.
func (c *call) notNil(name string, blk *backend.Block) {
	if c.ok && blk == nil {
		c.failf("%s: nil block", name)
	}
}

// randArgs is a checked Rand as kernels take it: the clock's address and
// the Philox key (the seed's halves), the seed and the stream.
type randArgs struct {
	clock  uintptr
	k0, k1 uint32
	seed   uint64
	stream uint32
}

// rand checks a Rand (its Clock I32 [2] and a Stream below 256).
func (c *call) rand(name string, r backend.Rand) randArgs {
	x := c.buf(name+".Clock", r.Clock, backend.I32, 2)
	if x == nil {
		return randArgs{}
	}
	if r.Stream >= 256 {
		c.failf("%s.Stream %d, want < 256", name, r.Stream)
		return randArgs{}
	}
	return randArgs{clock: x.ptr, k0: uint32(r.Seed), k1: uint32(r.Seed >> 32), seed: r.Seed, stream: r.Stream}
}
