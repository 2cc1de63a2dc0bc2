package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// testAdamSkip: Adam leaves param, m and v untouched while cfg.Skip is
// non-zero (even at step 0, which a skipped step never incremented), and
// matches the reference update once the flag is clear.
func testAdamSkip(e *env) {
	const size = 300
	cfg := backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4}
	param, grad, m, v := e.randAdamInputs(size)
	pb, gb, mb, vb := e.upload(param), e.upload(grad), e.upload(m), e.upload(v)
	cfg.Skip = e.upload([]int32{1, 0, 0})
	for _, step := range []int{0, 3} {
		e.be.Adam(pb, gb, mb, vb, e.count(step, 0), cfg)
		name := fmt.Sprintf("Adam skipped at step %d", step)
		checkEqual(e.t, name+" param", e.readF32(pb, size), param, 0)
		checkEqual(e.t, name+" m", e.readF32(mb, size), m, 0)
		checkEqual(e.t, name+" v", e.readF32(vb, size), v, 0)
	}
	e.be.Write(cfg.Skip, 0, []int32{0})
	e.be.Adam(pb, gb, mb, vb, e.count(3, 0), cfg)
	wp, wm, wv, sp, sm := adamRef(param, grad, m, v, 3, cfg)
	e.checkClose("Adam with a clear Skip param", e.readF32(pb, size), wp, sp, tolElem, 0)
	e.checkClose("Adam with a clear Skip m", e.readF32(mb, size), wm, sm, tolElem, 0)
	e.checkClose("Adam with a clear Skip v", e.readF32(vb, size), wv, nil, tolElem, 0)
}

// testSliceSeeds: full steps, the partial last step and steps past the end
// (including one whose start overflows int32) write the right seeds and
// count; the epoch in clock[0] plays no part.
func testSliceSeeds(e *env) {
	const n, batch = 23, 5
	perm := make([]int32, n)
	for i, j := range e.rnd.Perm(n) {
		perm[i] = int32(j) * 3
	}
	pb := e.upload(perm)
	for _, step := range []int32{0, 2, 3, 4, 5, 9, 1 << 29} {
		name := fmt.Sprintf("SliceSeeds n=%d batch=%d step=%d", n, batch, step)
		clock := e.upload([]int32{7, step})
		out := e.poisonI32(batch)
		cnt := e.count(-3, batch+2)
		e.be.SliceSeeds(pb, n, batch, clock, out, cnt)
		start := int64(step) * batch
		live := int(max(0, min(batch, n-start)))
		if got := e.readCount(cnt); got != live {
			e.t.Errorf("%s: count %d, want %d", name, got, live)
		}
		if live > 0 {
			checkEqual(e.t, name+" seeds", e.readI32(out, live), perm[start:start+int64(live)], 0)
		}
	}
}

// testFlagOverflow: a count at or below capacity leaves the flag clear; the
// first count above sets {1, epoch, step}; later overflows keep the first.
func testFlagOverflow(e *env) {
	flag := e.alloc(backend.I32, 3, 0)
	e.be.FlagOverflow(e.count(10, 10), e.upload([]int32{1, 2}), flag)
	e.be.FlagOverflow(e.count(0, 10), e.upload([]int32{1, 3}), flag)
	checkEqual(e.t, "FlagOverflow within capacity", e.readI32(flag, 3), []int32{0, 0, 0}, 0)
	e.be.FlagOverflow(e.count(11, 10), e.upload([]int32{4, 5}), flag)
	checkEqual(e.t, "FlagOverflow above capacity", e.readI32(flag, 3), []int32{1, 4, 5}, 0)
	e.be.FlagOverflow(e.count(500, 10), e.upload([]int32{6, 7}), flag)
	e.be.FlagOverflow(e.count(3, 10), e.upload([]int32{6, 8}), flag)
	checkEqual(e.t, "FlagOverflow keeps the first", e.readI32(flag, 3), []int32{1, 4, 5}, 0)
	e.be.Write(flag, 0, []int32{0, 0, 0})
	e.be.FlagOverflow(e.count(1, 0), e.upload([]int32{0, 9}), flag)
	checkEqual(e.t, "FlagOverflow after the host cleared it", e.readI32(flag, 3), []int32{1, 0, 9}, 0)
}

// testAccumulate: loss and correct add into acc with no flag or a clear
// one, and not while the flag is set.
func testAccumulate(e *env) {
	acc := e.upload([]float32{1.5, 2})
	loss := e.upload([]float32{0.25})
	correct := e.count(7, 40)
	e.be.Accumulate(loss, correct, acc, nil)
	checkEqual(e.t, "Accumulate without a flag", e.readF32(acc, 2), []float32{1.75, 9}, 0)
	flag := e.upload([]int32{0})
	e.be.Write(loss, 0, []float32{0.5})
	e.be.Accumulate(loss, correct, acc, flag)
	checkEqual(e.t, "Accumulate with a clear flag", e.readF32(acc, 2), []float32{2.25, 16}, 0)
	e.be.Write(flag, 0, []int32{1})
	e.be.Accumulate(loss, correct, acc, flag)
	checkEqual(e.t, "Accumulate with the flag set", e.readF32(acc, 2), []float32{2.25, 16}, 0)
}

// testAddCountAccumulate: AddCount followed at once by Accumulate (which a
// backend may do in one launch) gives what the two give kept apart: the
// count advanced first (also when it is the correct count Accumulate
// reads), each skipped only while its own flag is set.
func testAddCountAccumulate(e *env) {
	for _, c := range []struct {
		name           string
		same           bool  // the counter advanced is the correct count
		cntSet, accSet int32 // the two flags
	}{
		{"another counter", false, 0, 0},
		{"the correct count", true, 0, 0},
		{"the count's flag set", true, 1, 0},
		{"the accumulation's flag set", false, 0, 1},
	} {
		run := func(apart bool) ([]float32, []int32) {
			acc := e.upload([]float32{1.5, 2})
			loss := e.upload([]float32{0.25})
			counts := e.upload([]int32{7, 100})
			correct := backend.Count{Buf: counts, Off: 0, Cap: 40}
			cnt := backend.Count{Buf: counts, Off: 1, Cap: 1 << 20}
			if c.same {
				cnt = correct
			}
			cntFlag, accFlag := e.upload([]int32{c.cntSet}), e.upload([]int32{c.accSet})
			other := e.poison(4)
			e.be.AddCount(cnt, 3, cntFlag)
			if apart {
				e.be.Fill(other, 0)
			}
			e.be.Accumulate(loss, correct, acc, accFlag)
			return e.readF32(acc, 2), e.readI32(counts, 2)
		}
		accT, cntT := run(false)
		accA, cntA := run(true)
		name := "AddCount then Accumulate, " + c.name
		checkEqual(e.t, name+": acc", accT, accA, 0)
		checkEqual(e.t, name+": counts", cntT, cntA, 0)
		wantCnt := []int32{7, 100}
		if k := 1; c.cntSet == 0 {
			if c.same {
				k = 0
			}
			wantCnt[k] += 3
		}
		wantAcc := []float32{1.5, 2}
		if c.accSet == 0 {
			wantAcc = []float32{1.75, 2 + float32(wantCnt[0])}
		}
		checkEqual(e.t, name+": counts against the reference", cntA, wantCnt, 0)
		checkEqual(e.t, name+": acc against the reference", accA, wantAcc, 0)
	}
}

// testScaleShare: live rows scale by num/den (float64 reference), rows past
// the live count keep their values, and num = 0 zeroes the live rows even
// when they hold NaN.
func testScaleShare(e *env) {
	const rows, dim, live = 7, 5, 4
	x0 := e.randF32(rows*dim, 2)
	x := e.upload(append([]float32(nil), x0...))
	num, den := e.count(3, 1<<20), e.count(11, 1<<20)
	e.be.ScaleShare(x, e.count(live, rows), dim, num, den)
	got := e.readF32(x, rows*dim)
	want := make([]float64, rows*dim)
	scale := make([]float64, rows*dim)
	for i := range want {
		want[i] = float64(x0[i])
		if i < live*dim {
			want[i] = float64(x0[i]) * 3 / 11
		}
		scale[i] = 1
	}
	// num/den rounded to float32, then one product: two roundings of
	// values up to 0.55, at most 6.6e-8. Measured 4.3e-8 (CPU): 4e-7 is
	// 9.3x (6x the analysis).
	e.checkClose("ScaleShare", got, want, scale, 4e-7, dim)
	nan := e.alloc(backend.F32, rows*dim, math.NaN())
	e.be.ScaleShare(nan, e.count(live, rows), dim, e.count(0, 1<<20), den)
	got = e.readF32(nan, rows*dim)
	for i, v := range got {
		if i < live*dim && v != 0 {
			e.t.Fatalf("ScaleShare with num 0: element %d is %v, want 0", i, v)
		}
		if i >= live*dim && !math.IsNaN(float64(v)) {
			e.t.Fatalf("ScaleShare with num 0: padding element %d is %v, want untouched (NaN)", i, v)
		}
	}
}

// testAddCountAdam checks AddCount of an optimizer's step counter followed
// at once by Adam calls on that step (which a backend may fuse into one
// launch) against the two kept apart by another op: the same counter, the
// same parameter bits (over more parameters than one launch may take), the
// update of the advanced step, and nothing changed while Skip is set.
func testAddCountAdam(e *env) {
	const tensors, size = 19, 70
	cfg := backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4}
	type state struct{ p, g, m, v []float32 }
	init := make([]state, tensors)
	for k := range init {
		p, g, m, v := e.randAdamInputs(size)
		init[k] = state{p, g, m, v}
	}
	run := func(skip int32, apart bool) (params [][]float32, step int32) {
		cnt := e.upload([]int32{9, 4})
		cfg.Skip = e.upload([]int32{skip})
		ps := make([]backend.Buffer, tensors)
		bufs := make([][3]backend.Buffer, tensors)
		for k, s := range init {
			ps[k] = e.upload(s.p)
			bufs[k] = [3]backend.Buffer{e.upload(s.g), e.upload(s.m), e.upload(s.v)}
		}
		other := e.poison(4)
		e.be.AddCount(backend.Count{Buf: cnt, Off: 0}, 5, nil) // another counter: launched on its own
		e.be.AddCount(backend.Count{Buf: cnt, Off: 1}, 1, cfg.Skip)
		if apart {
			e.be.Fill(other, 0)
		}
		for k := range init {
			e.be.Adam(ps[k], bufs[k][0], bufs[k][1], bufs[k][2], backend.Count{Buf: cnt, Off: 1}, cfg)
		}
		if err := e.be.Sync(); err != nil {
			e.t.Fatalf("AddCount then Adam: %v", err)
		}
		for _, p := range ps {
			params = append(params, e.readF32(p, size))
		}
		c := readBack[int32](e, cnt, 2)
		if c[0] != 14 {
			e.t.Errorf("AddCount then Adam: the other counter is %d, want 14", c[0])
		}
		return params, c[1]
	}
	for _, skip := range []int32{0, 1} {
		name := fmt.Sprintf("AddCount then Adam (skip %d)", skip)
		fused, tF := run(skip, false)
		apart, tA := run(skip, true)
		want := int32(5)
		if skip != 0 {
			want = 4
		}
		if tF != want || tA != want {
			e.t.Errorf("%s: step %d together, %d apart, want %d", name, tF, tA, want)
		}
		for k := range fused {
			checkEqual(e.t, fmt.Sprintf("%s param %d", name, k), f32bits(fused[k]), f32bits(apart[k]), 0)
			if skip != 0 {
				checkEqual(e.t, fmt.Sprintf("%s param %d unchanged", name, k), fused[k], init[k].p, 0)
				continue
			}
			wp, _, _, sp, _ := adamRef(init[k].p, init[k].g, init[k].m, init[k].v, 5, cfg)
			e.checkClose(fmt.Sprintf("%s param %d", name, k), fused[k], wp, sp, tolElem, 0)
		}
	}
}
