package cpu

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// call validates the arguments of one op. The first problem is recorded as
// the backend's sticky error, naming the op and the argument; later checks
// of the same call are no-ops, and ok reports whether all checks passed.
type call struct {
	b  *Backend
	op string
	ok bool
}

// begin locks the backend for one op; the caller must defer c.end().
func (b *Backend) begin(op string) call {
	b.mu.Lock()
	c := call{b: b, op: op, ok: true}
	if b.closed {
		c.failf("%v", errClosed)
	}
	return c
}

func (c *call) end() { c.b.mu.Unlock() }

func (c *call) failf(format string, args ...any) {
	if c.ok {
		c.ok = false
		c.b.fail(fmt.Errorf("cpu: %s: %s", c.op, fmt.Sprintf(format, args...)))
	}
}

// buf returns the buffer behind arg, or nil (recording an error) when it is
// missing, foreign, of the wrong type or shorter than need elements.
func (c *call) buf(name string, arg backend.Buffer, dt backend.DType, need int) *buffer {
	if !c.ok {
		return nil
	}
	x, isCPU := arg.(*buffer)
	if !isCPU || x == nil {
		c.failf("%s: %s", name, describeForeign(arg))
		return nil
	}
	if x.dt != dt {
		c.failf("%s: dtype %s, want %s", name, x.dt, dt)
		return nil
	}
	if x.Len() < need {
		c.failf("%s: buffer has %d elements, need %d", name, x.Len(), need)
		return nil
	}
	return x
}

func (c *call) f32(name string, arg backend.Buffer, need int) []float32 {
	if x := c.buf(name, arg, backend.F32, need); x != nil {
		return x.f32
	}
	return nil
}

func (c *call) i32(name string, arg backend.Buffer, need int) []int32 {
	if x := c.buf(name, arg, backend.I32, need); x != nil {
		return x.i32
	}
	return nil
}

func (c *call) u8(name string, arg backend.Buffer, need int) []uint8 {
	if x := c.buf(name, arg, backend.U8, need); x != nil {
		return x.u8
	}
	return nil
}

// optF32 is f32 for an argument that may be nil (returns nil, no error).
func (c *call) optF32(name string, arg backend.Buffer, need int) []float32 {
	if isNil(arg) {
		return nil
	}
	return c.f32(name, arg, need)
}

func isNil(arg backend.Buffer) bool {
	if arg == nil {
		return true
	}
	x, ok := arg.(*buffer)
	return ok && x == nil
}

// count reads a Count: the live value clamped to [0, Cap], and the pointer to
// the int32 for ops that write it. A bad Count records an error.
func (c *call) count(name string, n backend.Count) (live int, ptr *int32) {
	if !c.ok {
		return 0, nil
	}
	if n.Cap < 0 || n.Cap > math.MaxInt32-1 {
		// The CUDA backend's bound: its kernels take the capacity as an
		// int32 and count up to it.
		c.failf("%s: capacity %d outside [0, 2^31-1)", name, n.Cap)
		return 0, nil
	}
	x, isCPU := n.Buf.(*buffer)
	switch {
	case !isCPU || x == nil:
		c.failf("%s.Buf: %s", name, describeForeign(n.Buf))
		return 0, nil
	case x.dt != backend.I32:
		c.failf("%s.Buf: dtype %s, want int32", name, x.dt)
		return 0, nil
	}
	s := x.i32
	if n.Off < 0 || n.Off >= len(s) {
		c.failf("%s: offset %d outside count buffer of %d elements", name, n.Off, len(s))
		return 0, nil
	}
	p := &s[n.Off]
	return min(max(int(*p), 0), n.Cap), p
}

// dim checks a positive static size.
func (c *call) dim(name string, v int) {
	if c.ok && v <= 0 {
		c.failf("%s: %d, want > 0", name, v)
	}
}

// clock reads epoch and step from a Rand's Clock buffer.
func (c *call) clock(r backend.Rand) (epoch, step uint32) {
	s := c.i32("rand.Clock", r.Clock, 2)
	if !c.ok {
		return 0, 0
	}
	if r.Stream >= 256 {
		c.failf("rand.Stream %d, want < 256", r.Stream)
		return 0, 0
	}
	return uint32(s[0]), uint32(s[1])
}

// flag reports whether an optional I32 flag (element 0) is set: false when
// arg is nil; a bad buffer records an error (and reads as unset).
func (c *call) flag(name string, arg backend.Buffer) bool {
	if isNil(arg) {
		return false
	}
	s := c.i32(name, arg, 1)
	return c.ok && s[0] != 0
}

func (c *call) i64(name string, arg backend.Buffer, need int) []int64 {
	if x := c.buf(name, arg, backend.I64, need); x != nil {
		return x.i64
	}
	return nil
}

// f32or16 is an argument that may be F32 or BF16 (a feature table,
// activations): buf with the argument's own type of the two.
func (c *call) f32or16(name string, arg backend.Buffer, need int) *buffer {
	if x, ok := arg.(*buffer); ok && x != nil && x.dt == backend.BF16 {
		return c.buf(name, arg, backend.BF16, need)
	}
	return c.buf(name, arg, backend.F32, need)
}
