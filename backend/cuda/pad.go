package cuda

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Padding rows of capacity GEMMs (see linear.go). A Linear op that
// multiplies the whole capacity must behave as if only live rows were
// multiplied: rows of an accumulated output past the live count keep their
// contents (an overwritten output's padding rows are unspecified, as the
// backend contract allows), and a product summed over rows (the weight
// gradient) sees zeros in its inputs' padding rows. The padding rows are
// moved to a stash before the GEMM; putting them back is deferred:
// consecutive Linear ops over the same matrices (the weight gradient and
// the input gradients reading one output gradient) stash once, and every
// deferred region is restored, in reverse order, before any other op, copy,
// read, sync, free, mark or the end of a capture.
//
// The deferral is exact: a later Linear op may use a stashed matrix only as
// the very same matrix (address, width, capacity and live count): its live
// rows are untouched, its padding rows are either irrelevant (an input or
// output of a row-wise product, whose padding rows are restored later) or
// zeroed on demand (a summed input). Any other overlap with a stashed matrix
// restores everything first.
//
// A summed input whose padding rows are nobody's data (a whole buffer
// declared by ScratchPadding) is not stashed: its padding rows are zeroed
// in place and left so.

// maxPads is the number of matrices that can be stashed at once (one
// scratch slot each); it matches PAD_MAX in kernels/util.cu.
const maxPads = 4

// Modes of kernels/util.cu's pad_regions.
const (
	padSave     = 1
	padSaveZero = 2
	padZeroOnly = 3
	padRestore  = 4
)

// padRole is how a Linear op uses a row-major matrix operand.
type padRole uint8

const (
	roleRows  padRole = iota // row-wise input: its padding rows only reach padding rows of the output
	roleKeep                 // accumulated output: padding rows must keep their contents
	roleFree                 // overwritten output: padding rows may take any value
	roleZero                 // input summed over rows: padding rows must read as zero
	roleWhole                // no live count (weights, weight gradients)
)

// outputRole is the role of a Linear op's output: its padding rows are kept
// only when the op accumulates (the backend contract leaves them unspecified
// otherwise, which saves a stash and a restore per product).
func outputRole(accumulate bool) padRole {
	if accumulate {
		return roleKeep
	}
	return roleFree
}

// matrix is a float32 operand [rows, cols] at ptr with a live row count at
// nP (0 for roleWhole, where rows*cols is its length).
type matrix struct {
	ptr        uintptr
	cols, rows int
	nP         uintptr
	role       padRole
	free       bool // its padding rows are nobody's data (buffer.paddingFree)
}

func (m matrix) end() uintptr { return m.ptr + uintptr(m.rows)*uintptr(m.cols)*4 }

func (m matrix) overlaps(o matrix) bool { return m.ptr < o.end() && o.ptr < m.end() }

// same reports whether two operands are the same matrix (live count
// included), so that their padding rows coincide.
func (m matrix) same(o matrix) bool {
	return m.role != roleWhole && o.role != roleWhole && m.ptr == o.ptr && m.cols == o.cols && m.rows == o.rows && m.nP == o.nP
}

// padRegion is a stashed matrix.
type padRegion struct {
	m     matrix
	stash uintptr
	zero  bool // its padding rows hold zeros now (else their old values or GEMM output)
}

// padAction is one region of a pad_regions launch.
type padAction struct {
	m     matrix
	stash uintptr
	mode  int
}

// capacityGemm runs gemm (over the whole capacity) with the operands'
// padding rows handled as their roles say; gemm gets the address to use for
// each operand (its own, or a copy).
func (c *call) capacityGemm(ops []matrix, gemm func(addr []uintptr)) {
	b := c.b
	if !c.ok {
		return
	}
	addr := make([]uintptr, len(ops))
	for i, m := range ops {
		addr[i] = m.ptr
	}
	// Operands that overlap each other without being the same matrix (an
	// input aliased at another offset): zeroing one operand's padding rows
	// in place could change another's live rows, so summed inputs become
	// copies with zero padding rows, and nothing is deferred.
	immediate := false
	for i := range ops {
		for j := i + 1; j < len(ops); j++ {
			if ops[i].overlaps(ops[j]) && !ops[i].same(ops[j]) && ops[i].role != roleWhole && ops[j].role != roleWhole {
				immediate = true
			}
		}
	}
	flush, fresh := immediate, 0
	for _, m := range ops {
		found := false
		for _, r := range b.pads {
			if m.same(r.m) {
				found = true
			} else if m.overlaps(r.m) {
				flush = true
			}
		}
		if !found && (m.role == roleKeep || m.role == roleZero && !m.free) {
			fresh++
		}
	}
	if flush || len(b.pads)+fresh > maxPads {
		c.flushPads()
	}
	var acts []padAction
	copies := 0
	for i, m := range ops {
		if immediate && m.role == roleZero {
			// Copies take slots from the top; stashes (none are
			// deferred here) from the bottom.
			copies++
			addr[i] = c.maskedCopy(m, maxPads-copies)
			continue
		}
		if m.role != roleKeep && m.role != roleZero {
			continue
		}
		k := c.findPad(m)
		switch {
		case k < 0 && m.role == roleZero && m.free:
			acts = append(acts, padAction{m: m, mode: padZeroOnly})
		case k < 0:
			slot := len(b.pads)
			stash := c.scratch(scratchPad0+slot, int64(m.rows)*int64(m.cols)*4)
			if !c.ok {
				return
			}
			mode := padSave
			if m.role == roleZero {
				mode = padSaveZero
			}
			b.pads = append(b.pads, padRegion{m: m, stash: stash, zero: m.role == roleZero})
			acts = append(acts, padAction{m: m, stash: stash, mode: mode})
		case m.role == roleZero && !b.pads[k].zero:
			b.pads[k].zero = true
			acts = append(acts, padAction{m: m, mode: padZeroOnly})
		}
	}
	c.padLaunch(acts)
	gemm(addr)
	for _, m := range ops {
		if m.role == roleKeep || m.role == roleFree {
			if k := c.findPad(m); k >= 0 {
				b.pads[k].zero = false // the product wrote its padding rows
			}
		}
	}
	if immediate {
		c.flushPads()
	}
}

// maskedCopy copies m's live rows into scratch slot scratchPad0+slot with
// zero padding rows, and returns the copy's address.
func (c *call) maskedCopy(m matrix, slot int) uintptr {
	dst := c.scratch(scratchPad0+slot, int64(m.rows)*int64(m.cols)*4)
	c.args().ptr(m.ptr).ptr(dst).ptr(m.nP).i32(m.cols).i32(m.rows)
	c.launch("masked_copy", d1(c.blocks(int64(m.rows)*int64(m.cols), 256)), d1(256), 0)
	return dst
}

func (c *call) findPad(m matrix) int {
	for i, r := range c.b.pads {
		if m.same(r.m) {
			return i
		}
	}
	return -1
}

// flushPads restores every stashed region, the last stashed first.
func (c *call) flushPads() {
	b := c.b
	if len(b.pads) == 0 {
		return
	}
	acts := make([]padAction, 0, len(b.pads))
	for i := len(b.pads) - 1; i >= 0; i-- {
		r := b.pads[i]
		acts = append(acts, padAction{m: r.m, stash: r.stash, mode: padRestore})
	}
	b.pads = b.pads[:0]
	c.padLaunch(acts)
}

// padLaunch issues acts in order: in one launch when no two of them
// overlap, else one launch each.
func (c *call) padLaunch(acts []padAction) {
	if len(acts) == 0 {
		return
	}
	for i := range acts {
		for j := i + 1; j < len(acts); j++ {
			if acts[i].m.overlaps(acts[j].m) {
				for k := range acts {
					c.padLaunchOne(acts[k : k+1])
				}
				return
			}
		}
	}
	c.padLaunchOne(acts)
}

// padLaunchOne launches pad_regions over the regions of acts, maxPads at
// a time.
func (c *call) padLaunchOne(acts []padAction) {
	for len(acts) > maxPads {
		c.padLaunchOne(acts[:maxPads])
		acts = acts[maxPads:]
	}
	var s structArg
	var work int64
	for _, a := range acts {
		vec := a.m.cols%4 == 0 && a.m.ptr%16 == 0 && a.stash%16 == 0
		if a.mode == padZeroOnly {
			vec = a.m.cols%4 == 0 && a.m.ptr%16 == 0
		}
		s.ptr(a.m.ptr).ptr(a.stash).ptr(a.m.nP).i32(a.m.cols).i32(a.m.rows).i32(a.mode).i32(btoi(vec))
		w := int64(a.m.rows) * int64(a.m.cols)
		if vec {
			w /= 4
		}
		work = max(work, w)
	}
	s.zeros(40 * (maxPads - len(acts))).i32(len(acts))
	c.args().bytes(s.done())
	// The padding rows are a small part of the capacity that work counts
	// (the envelope's margin): a grid of 4 blocks per multiprocessor, whose
	// threads stride over them, spares the launch thousands of blocks that
	// would find nothing to do.
	blocks := min(c.blocks(work, 256), uint32(4*c.b.dev.sms))
	c.launch("pad_regions", d1(blocks), d1(256), 0)
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// paddingFree reports whether x, as a matrix of need elements with a live
// count, is a whole buffer declared by ScratchPadding, so that its padding
// rows may be zeroed in place.
func (x *buffer) paddingFree(need int) bool {
	return x.root != nil && x.root.paddingFree && x.ptr == x.root.ptr && int64(need)*int64(x.dt.Size()) == x.root.bytes
}

// ScratchPadding declares that nobody reads the padding rows of buf as a
// whole matrix (backend.PaddingScratch): capacity products zero them in
// place instead of stashing them.
func (b *Backend) ScratchPadding(buf backend.Buffer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	x, ok := buf.(*buffer)
	if !ok || x == nil || x.owner != b {
		b.fail(fmt.Errorf("cuda: ScratchPadding: %s", describeForeign(buf)))
		return
	}
	if x.root != nil && !x.root.freed {
		x.root.paddingFree = true
	}
}
