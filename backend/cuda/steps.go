package cuda

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The ops of backend.Steps (kernels/steps.cu): they read the clock, counts
// and flags on the device, so a captured step replays them unchanged.

// SliceSeeds writes the seeds of step s = clock[1] (read on the device):
// out[i] = perm[s·batch + i] for i < min(batch, n - s·batch), and that
// number (0 when s < 0 or s·batch >= n, computed in 64 bits) into count.
// perm is I32 [n], out I32 [batch], count.Cap >= batch; out's rows past the
// live count are left as they were. One launch.
func (b *Backend) SliceSeeds(perm backend.Buffer, n, batch int, clock backend.Buffer, out backend.Buffer, count backend.Count) {
	c := b.begin("SliceSeeds")
	defer c.end()
	c.dim("batch", batch)
	if c.ok && (n < 0 || n > math.MaxInt32) {
		c.failf("n: %d, want in [0, 2^31)", n)
	}
	ps := c.buf("perm", perm, backend.I32, n)
	cs := c.buf("clock", clock, backend.I32, 2)
	os := c.buf("out", out, backend.I32, batch)
	cp := c.count("count", count)
	if c.ok && count.Cap < batch {
		c.failf("count.Cap %d below batch %d", count.Cap, batch)
	}
	if !c.ok {
		return
	}
	c.args().ptr(ps.addr()).i64(int64(n)).i32(batch).ptr(cs.addr()).ptr(os.addr()).ptr(cp)
	c.launch("slice_seeds", d1(c.blocks(int64(batch), 256)), d1(256), 0)
}

// FlagOverflow sets flag (I32 [3]) to {1, clock[0], clock[1]} when the live
// value of cnt exceeds cnt.Cap and flag[0] is 0, all on the device. The
// check is queued: FlagOverflow calls in a row with the same clock and flag
// (a step checks every count of its plan) become one single-thread launch
// that checks them in order; the queue is launched before any other op,
// copy, read, sync, free, mark or the end of a capture.
func (b *Backend) FlagOverflow(cnt backend.Count, clock, flag backend.Buffer) {
	c := b.begin("FlagOverflow")
	defer c.end()
	p := c.count("c", cnt)
	cs := c.buf("clock", clock, backend.I32, 2)
	fs := c.buf("flag", flag, backend.I32, 3)
	if !c.ok {
		return
	}
	q := &b.flagQ
	if len(q.cs) > 0 && (q.clock != cs.ptr || q.flag != fs.ptr || len(q.cs) == flagMax) {
		c.flushFlags()
	}
	q.clock, q.flag = cs.ptr, fs.ptr
	q.cs = append(q.cs, p)
	q.caps = append(q.caps, cnt.Cap)
}

// flagMax is FLAG_MAX of kernels/steps.cu.
const flagMax = 8

// flagQueue holds queued FlagOverflow calls that share clock and flag.
type flagQueue struct {
	cs          []uintptr
	caps        []int
	clock, flag uintptr
}

// flushFlags launches the queued FlagOverflow checks (flag_overflows).
func (c *call) flushFlags() {
	q := &c.b.flagQ
	if len(q.cs) == 0 {
		return
	}
	var s structArg
	for k := range flagMax {
		var p uintptr
		if k < len(q.cs) {
			p = q.cs[k]
		}
		s.ptr(p)
	}
	for k := range flagMax {
		var v int
		if k < len(q.caps) {
			v = q.caps[k]
		}
		s.i32(v)
	}
	s.i32(len(q.cs))
	c.args().bytes(s.done()).ptr(q.clock).ptr(q.flag)
	q.cs, q.caps = q.cs[:0], q.caps[:0]
	c.launch("flag_overflows", d1(1), d1(32), 0)
}

// Accumulate adds loss[0] to acc[0] and the int32 at correct (not clamped:
// it is a counter) to acc[1] (acc F32 [2]) unless unless (optional I32
// flag, element 0) is non-zero on the device. One single-thread launch,
// which first does the AddCount queued before it, if any (AddCount).
func (b *Backend) Accumulate(loss backend.Buffer, correct backend.Count, acc, unless backend.Buffer) {
	c := b.begin("Accumulate")
	defer c.end()
	ls := c.buf("loss", loss, backend.F32, 1)
	cp := c.count("correct", correct)
	as := c.buf("acc", acc, backend.F32, 2)
	u := c.optBuf("unless", unless, backend.I32, 1)
	if !c.ok {
		c.flushCount()
		return
	}
	q := b.countQ
	b.countQ = countQueue{}
	c.args().ptr(ls.addr()).ptr(cp).ptr(as.addr()).ptr(u.addr()).ptr(q.p).i32(int(q.delta)).ptr(q.unless)
	c.launch("accumulate", d1(1), d1(32), 0)
}

// ScaleShare multiplies rows [:n] of x (F32 [n.Cap, dim]) by num/den, both
// read on the device; the rows become 0 when num is 0. One launch.
func (b *Backend) ScaleShare(x backend.Buffer, n backend.Count, dim int, num, den backend.Count) {
	c := b.begin("ScaleShare")
	defer c.end()
	c.dim("dim", dim)
	xs := c.buf("x", x, backend.F32, n.Cap*dim)
	np := c.count("n", n)
	nump := c.count("num", num)
	denp := c.count("den", den)
	if !c.ok {
		return
	}
	c.args().ptr(xs.addr()).ptr(np).i32(n.Cap).i32(dim).ptr(nump).ptr(denp)
	c.launch("scale_share", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}
