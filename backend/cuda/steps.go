package cuda

import "github.com/fanout-gnn/fanout/backend"

// The ops of backend.Steps (kernels/steps.cu): they read the clock, counts
// and flags on the device, so a captured step replays them unchanged.

// SliceSeeds writes the seeds of step s = clock[1] (read on the device):
// out[i] = perm[s·batch + i] for i < min(batch, n - s·batch), and that
// number (0 when s < 0 or s·batch >= n, computed in 64 bits) into count.
// perm is I32 [n], out I32 [batch], count.Cap >= batch; out's rows past the
// live count are left as they were. One launch.
func (b *Backend) SliceSeeds(perm backend.Buffer, n, batch int, clock backend.Buffer, out backend.Buffer, count backend.Count) {
	c, ck := b.checkSliceSeeds(perm, n, batch, clock, out, count)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchSliceSeeds(&ck, d1(c.blocks(int64(batch), 256)), d1(256), 0)
}

// FlagOverflow sets flag (I32 [3]) to {1, clock[0], clock[1]} when the live
// value of cnt exceeds cnt.Cap and flag[0] is 0, all on the device. The
// check is queued: FlagOverflow calls in a row with the same clock and flag
// (a step checks every count of its plan) become one single-thread launch
// that checks them in order; the queue is launched before any other op,
// copy, read, sync, free, mark or the end of a capture.
func (b *Backend) FlagOverflow(cnt backend.Count, clock, flag backend.Buffer) {
	c, ck := b.checkFlagOverflow(cnt, clock, flag)
	defer c.end()
	if !c.ok {
		return
	}
	p, cs, fs := ck.cP, ck.clock, ck.flag
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
	clock, flag := q.clock, q.flag
	q.cs, q.caps = q.cs[:0], q.caps[:0]
	c.launchFlagOverflows(s.done(), clock, flag, d1(1), d1(32), 0)
}

// Accumulate adds loss[0] to acc[0] and the int32 at correct (not clamped:
// it is a counter) to acc[1] (acc F32 [2]) unless unless (optional I32
// flag, element 0) is non-zero on the device. One single-thread launch,
// which first does the AddCount queued before it, if any (AddCount).
func (b *Backend) Accumulate(loss backend.Buffer, correct backend.Count, acc, unless backend.Buffer) {
	c, ck := b.checkAccumulate(loss, correct, acc, unless)
	defer c.end()
	if !c.ok {
		c.flushCount()
		return
	}
	q := b.countQ
	b.countQ = countQueue{}
	c.launchAccumulate(&ck, q.p, int(q.delta), q.unless, d1(1), d1(32), 0)
}

// ScaleShare multiplies rows [:n] of x (F32 [n.Cap, dim]) by num/den, both
// read on the device; the rows become 0 when num is 0. One launch.
func (b *Backend) ScaleShare(x backend.Buffer, n backend.Count, dim int, num, den backend.Count) {
	c, ck := b.checkScaleShare(x, n, dim, num, den)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchScaleShare(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}
