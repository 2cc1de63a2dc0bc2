package cpu

import "github.com/fanout-gnn/fanout/backend"

// SliceSeeds writes the seeds of step s = clock[1]: out[i] = perm[s·batch+i]
// for i < min(batch, n - s·batch), and that number (0 when s·batch >= n or
// s < 0) into count. perm is I32 [n]; out is I32 [batch]; count.Cap must be
// at least batch.
func (b *Backend) SliceSeeds(perm backend.Buffer, n, batch int, clock backend.Buffer, out backend.Buffer, count backend.Count) {
	c, ck := b.checkSliceSeeds(perm, n, batch, clock, out, count)
	defer c.end()
	if !c.ok {
		return
	}
	ps, cs, os, cp := ck.perm, ck.clock, ck.out, ck.countP
	start := int64(cs[1]) * int64(batch)
	live := 0
	if start >= 0 && start < int64(n) {
		live = int(min(int64(batch), int64(n)-start))
		copy(os[:live], ps[start:])
	}
	*cp = int32(live)
}

// FlagOverflow sets flag (I32 [3]) to {1, epoch, step} from clock (I32 [2])
// when c's live value exceeds c.Cap and flag[0] is 0; a set flag is kept.
func (b *Backend) FlagOverflow(cnt backend.Count, clock, flag backend.Buffer) {
	c, ck := b.checkFlagOverflow(cnt, clock, flag)
	defer c.end()
	if !c.ok {
		return
	}
	p, cs, fs := ck.cP, ck.clock, ck.flag
	if int64(*p) > int64(cnt.Cap) && fs[0] == 0 {
		fs[0], fs[1], fs[2] = 1, cs[0], cs[1]
	}
}

// Accumulate adds loss[0] to acc[0] and correct's live value to acc[1]
// (acc F32 [2]) unless unless (an optional I32 flag, element 0) is non-zero.
// The correct value is not clamped to its capacity (it is a counter).
func (b *Backend) Accumulate(loss backend.Buffer, correct backend.Count, acc, unless backend.Buffer) {
	c, ck := b.checkAccumulate(loss, correct, acc, unless)
	defer c.end()
	if !c.ok || ck.unless {
		return
	}
	ck.acc[0] += ck.loss[0]
	ck.acc[1] += float32(*ck.correctP)
}

// ScaleShare multiplies rows [:n] of x (F32 [cap, dim]) by num/den (live
// counts); rows become 0 when num is 0.
func (b *Backend) ScaleShare(x backend.Buffer, n backend.Count, dim int, num, den backend.Count) {
	c, ck := b.checkScaleShare(x, n, dim, num, den)
	defer c.end()
	if !c.ok {
		return
	}
	np, dp := ck.numP, ck.denP
	rows := ck.x[:ck.n*dim]
	if *np == 0 || *dp == 0 {
		clear(rows)
		return
	}
	f := float32(float64(*np) / float64(*dp))
	for i := range rows {
		rows[i] *= f
	}
}

// HostFunc runs fn at once: the CPU backend's ops are synchronous.
func (b *Backend) HostFunc(fn func()) { fn() }
