package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// capture records ops as a Replay of cp, which the test closes (and checks
// the closing) when it ends.
func (e *env) capture(cp backend.Capturer, ops func()) backend.Replay {
	e.t.Helper()
	if err := cp.BeginCapture(); err != nil {
		e.t.Fatalf("BeginCapture: %v", err)
	}
	ops()
	rp, err := cp.EndCapture()
	if err != nil {
		e.t.Fatalf("EndCapture: %v", err)
	}
	e.t.Cleanup(func() {
		if err := rp.Close(); err != nil {
			e.t.Errorf("Replay.Close: %v", err)
		}
	})
	return rp
}

// testCapture (backends implementing backend.Capturer): a captured step of
// SliceSeeds + Gather + FlagOverflow + Accumulate + AddCount on the clock's
// step runs nothing while captured, then each replay slices the next step's
// seeds (the last one partial, then none), reading the clock the previous
// replay advanced; a step the host writes into the clock is honoured.
func testCapture(e *env) {
	cp, ok := e.be.(backend.Capturer)
	if !ok {
		e.t.Skipf("%s does not implement backend.Capturer", e.be.Name())
	}
	const n, batch, rows, dim = 11, 4, 30, 3
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(e.rnd.IntN(rows))
	}
	table := e.randF32(rows*dim, 5)
	pb, tb := e.upload(perm), e.upload(table)
	clock := e.upload([]int32{2, 0})
	seeds := e.poisonI32(batch)
	cnt := e.count(0, batch)
	out := e.poison(batch * dim)
	flag := e.alloc(backend.I32, 3, 0)
	acc := e.alloc(backend.F32, 2, 0)
	loss := e.upload([]float32{0.5})
	step := backend.Count{Buf: clock, Off: 1, Cap: 1 << 30}
	small := backend.Count{Buf: cnt.Buf, Off: cnt.Off, Cap: batch - 1} // overflows on full batches
	e.sync()

	rp := e.capture(cp, func() {
		e.be.SliceSeeds(pb, n, batch, clock, seeds, cnt)
		e.be.Gather(tb, dim, seeds, cnt, out)
		e.be.FlagOverflow(small, clock, flag)
		e.be.Accumulate(loss, cnt, acc, nil)
		e.be.AddCount(step, 1, nil)
	})
	checkEqual(e.t, "clock after capture (nothing ran)", e.readI32(clock, 2), []int32{2, 0}, 0)

	var wantAcc [2]float32
	check := func(launch int, s int32) {
		e.t.Helper()
		rp.Launch()
		e.sync()
		name := fmt.Sprintf("replay %d (step %d)", launch, s)
		checkEqual(e.t, name+" clock", e.readI32(clock, 2), []int32{2, s + 1}, 0)
		live := max(0, min(batch, n-int(s)*batch))
		if got := e.readCount(cnt); got != live {
			e.t.Errorf("%s: count %d, want %d", name, got, live)
		}
		want := make([]float32, 0, live*dim)
		for i := range live {
			id := int(perm[int(s)*batch+i])
			want = append(want, table[id*dim:(id+1)*dim]...)
		}
		checkEqual(e.t, name+" gathered rows", e.readF32(out, live*dim), want, dim)
		wantAcc[0] += 0.5
		wantAcc[1] += float32(live)
		checkEqual(e.t, name+" acc", e.readF32(acc, 2), wantAcc[:], 0)
		checkEqual(e.t, name+" flag", e.readI32(flag, 3), []int32{1, 2, 0}, 0)
		e.be.Fill(out, -1) // outside the capture: the next replay must rewrite
	}
	for s := range int32(3) {
		check(int(s), s)
	}
	e.be.Write(clock, 1, []int32{1})
	check(3, 1)
	check(4, 2)
	check(5, 3) // past the end: no seeds
}
