package cpu

import "github.com/fanout-gnn/fanout/backend"

// SliceSeeds writes the seeds of step s = clock[1]: out[i] = perm[s·batch+i]
// for i < min(batch, n - s·batch), and that number (0 when s·batch >= n or
// s < 0) into count. perm is I32 [n]; out is I32 [batch]; count.Cap must be
// at least batch.
func (b *Backend) SliceSeeds(perm backend.Buffer, n, batch int, clock backend.Buffer, out backend.Buffer, count backend.Count) {
	c := b.begin("SliceSeeds")
	defer c.end()
	c.dim("batch", batch)
	if c.ok && n < 0 {
		c.failf("n: %d, want >= 0", n)
	}
	ps := c.i32("perm", perm, n)
	cs := c.i32("clock", clock, 2)
	os := c.i32("out", out, batch)
	_, cp := c.count("count", count)
	if c.ok && count.Cap < batch {
		c.failf("count.Cap %d below batch %d", count.Cap, batch)
	}
	if !c.ok {
		return
	}
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
	c := b.begin("FlagOverflow")
	defer c.end()
	_, p := c.count("c", cnt)
	cs := c.i32("clock", clock, 2)
	fs := c.i32("flag", flag, 3)
	if !c.ok {
		return
	}
	if int64(*p) > int64(cnt.Cap) && fs[0] == 0 {
		fs[0], fs[1], fs[2] = 1, cs[0], cs[1]
	}
}

// Accumulate adds loss[0] to acc[0] and correct's live value to acc[1]
// (acc F32 [2]) unless unless (an optional I32 flag, element 0) is non-zero.
// The correct value is not clamped to its capacity (it is a counter).
func (b *Backend) Accumulate(loss backend.Buffer, correct backend.Count, acc, unless backend.Buffer) {
	c := b.begin("Accumulate")
	defer c.end()
	ls := c.f32("loss", loss, 1)
	_, p := c.count("correct", correct)
	as := c.f32("acc", acc, 2)
	skip := c.flag("unless", unless)
	if !c.ok || skip {
		return
	}
	as[0] += ls[0]
	as[1] += float32(*p)
}

// ScaleShare multiplies rows [:n] of x (F32 [cap, dim]) by num/den (live
// counts); rows become 0 when num is 0.
func (b *Backend) ScaleShare(x backend.Buffer, n backend.Count, dim int, num, den backend.Count) {
	c := b.begin("ScaleShare")
	defer c.end()
	c.dim("dim", dim)
	live, _ := c.count("n", n)
	xs := c.f32("x", x, n.Cap*dim)
	_, np := c.count("num", num)
	_, dp := c.count("den", den)
	if !c.ok {
		return
	}
	rows := xs[:min(live, n.Cap)*dim]
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
