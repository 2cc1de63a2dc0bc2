package cpu

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
	"github.com/fanout-gnn/fanout/rng"
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

// isNil reports whether an optional buffer argument is absent.
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
	p := c.countPtr(name, n)
	if p == nil {
		return 0, nil
	}
	return min(max(int(*p), 0), n.Cap), p
}

// countPtr checks a Count's buffer and offset and returns the address of
// its int32.
func (c *call) countPtr(name string, n backend.Count) *int32 {
	if !c.ok {
		return nil
	}
	x, isCPU := n.Buf.(*buffer)
	switch {
	case !isCPU || x == nil:
		c.failf("%s.Buf: %s", name, describeForeign(n.Buf))
		return nil
	case x.dt != backend.I32:
		c.failf("%s.Buf: dtype %s, want int32", name, x.dt)
		return nil
	}
	s := x.i32
	if n.Off < 0 || n.Off >= len(s) {
		c.failf("%s: offset %d outside count buffer of %d elements", name, n.Off, len(s))
		return nil
	}
	return &s[n.Off]
}

// check records err (a shared check of package backend) when it is set.
func (c *call) check(err error) {
	if c.ok && err != nil {
		c.failf("%v", err)
	}
}

// raise records a bad-data error of the shared table (package errcode),
// the error the CUDA kernels report for the same data.
func (c *call) raise(code errcode.Code, x, y, z int) {
	c.failf("%s", code.Message(int64(x), int64(y), int64(z)))
}

// rand checks a Rand (its Clock I32 [2] and a Stream below 256) and
// returns the Philox key it names, with epoch and step read from Clock.
func (c *call) rand(name string, r backend.Rand) rng.Key {
	s := c.i32(name+".Clock", r.Clock, 2)
	if !c.ok {
		return rng.Key{}
	}
	if r.Stream >= 256 {
		c.failf("%s.Stream %d, want < 256", name, r.Stream)
		return rng.Key{}
	}
	return rng.Key{Seed: r.Seed, Epoch: uint32(s[0]), Step: uint32(s[1]), Stream: r.Stream}
}

// counter checks an int32 in backend memory whose Cap is not used (a
// counter an op writes or adds to) and returns its address.
func (c *call) counter(name string, n backend.Count) *int32 {
	return c.countPtr(name, backend.Count{Buf: n.Buf, Off: n.Off})
}

// notNil checks a block an op writes into.
func (c *call) notNil(name string, blk *backend.Block) {
	if c.ok && blk == nil {
		c.failf("%s: nil block", name)
	}
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

// typed is buf for an argument that may have any of the types dts: its own
// type when that is one of them.
func (c *call) typed(name string, arg backend.Buffer, need int, dts ...backend.DType) *buffer {
	x, _ := arg.(*buffer)
	return c.buf(name, arg, backend.TypeAmong(x.DType(), dts...), need)
}
