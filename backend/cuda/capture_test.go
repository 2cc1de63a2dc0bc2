package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// skipStep is a miniature replayed training step: the step's seeds are
// sliced on the device clock, a probe count is checked for overflow, and
// the "gradient" (rows of a table picked by the seeds) is applied by Adam
// unless the overflow flag is set, which also holds back Adam's step
// counter and the loss sums.
type skipStep struct {
	be                              backend.Backend
	perm, clock, seeds, table, grad backend.Buffer
	param, m, v, flag, acc, loss    backend.Buffer
	nSeeds, probe, adamT, clockStep backend.Count
	n, batch, dim                   int
	paramLen                        int
	cfg                             backend.AdamConfig
}

func newSkipStep(t testing.TB, be backend.Backend, r *rand.Rand) *skipStep {
	const n, batch, dim, rows = 20, 5, 6, 50
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(r.IntN(rows))
	}
	s := &skipStep{be: be, n: n, batch: batch, dim: dim, paramLen: batch * dim,
		cfg: backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-3}}
	s.perm = upload(t, be, perm)
	s.clock = upload(t, be, []int32{4, 0})
	s.clockStep = backend.Count{Buf: s.clock, Off: 1, Cap: 1 << 30}
	s.seeds = alloc(t, be, backend.I32, batch)
	s.nSeeds = countBuf(t, be, 0, batch)
	s.probe = countBuf(t, be, 0, 10)
	s.adamT = countBuf(t, be, 0, 1<<30)
	s.table = upload(t, be, randF32(r, rows*dim))
	s.grad = alloc(t, be, backend.F32, batch*dim)
	s.param = upload(t, be, randF32(r, batch*dim))
	s.m = alloc(t, be, backend.F32, batch*dim)
	s.v = alloc(t, be, backend.F32, batch*dim)
	s.flag = alloc(t, be, backend.I32, 3)
	s.acc = alloc(t, be, backend.F32, 2)
	s.loss = upload(t, be, []float32{0.25})
	s.cfg.Skip = s.flag
	return s
}

// issue enqueues one step.
func (s *skipStep) issue() {
	be := s.be
	be.SliceSeeds(s.perm, s.n, s.batch, s.clock, s.seeds, s.nSeeds)
	be.FlagOverflow(s.probe, s.clock, s.flag)
	be.Gather(s.table, s.dim, s.seeds, s.nSeeds, s.grad)
	be.Accumulate(s.loss, s.nSeeds, s.acc, s.flag)
	be.AddCount(s.adamT, 1, s.flag)
	be.Adam(s.param, s.grad, s.m, s.v, s.adamT, s.cfg)
	be.AddCount(s.clockStep, 1, nil)
}

// TestCaptureSkipsOverflowedSteps replays a captured step and compares
// every replay with the CPU backend running the same step eagerly: a probe
// above its capacity sets the flag (with the epoch and step), and while it
// is set Adam, its step counter and the sums stand still; after the host
// clears it, updates resume. Steps past the epoch's end slice no seeds.
func TestCaptureSkipsOverflowedSteps(t *testing.T) {
	gpu := openTest(t, Options{})
	host := cpu.New(2)
	defer host.Close()
	gs := newSkipStep(t, gpu, rand.New(rand.NewPCG(21, 22)))
	hs := newSkipStep(t, host, rand.New(rand.NewPCG(21, 22)))
	must(t, gpu)
	g := captureGraph(t, gpu, gs.issue)
	defer g.Close()
	gpu.ResetStats()
	probes := []int32{3, 10, 11, 0, 0, 2, 0}
	before := readF32(t, gpu, gs.param, gs.paramLen)
	for i, p := range probes {
		reset := i == 4 // the host clears the flag before this step
		for _, s := range []*skipStep{gs, hs} {
			s.be.Write(s.probe.Buf, 0, []int32{p})
			if reset {
				s.be.Write(s.flag, 0, []int32{0, 0, 0})
			}
		}
		g.Launch()
		hs.issue()
		name := fmt.Sprintf("step %d (probe %d)", i, p)
		for _, b := range []struct {
			what     string
			gpu, cpu backend.Buffer
			n        int
		}{{"clock", gs.clock, hs.clock, 2}, {"flag", gs.flag, hs.flag, 3}, {"adam t", gs.adamT.Buf, hs.adamT.Buf, 1},
			{"count", gs.nSeeds.Buf, hs.nSeeds.Buf, 1}} {
			equalI32(t, name+" "+b.what, readI32(t, gpu, b.gpu, b.n), readI32(t, host, b.cpu, b.n))
		}
		if got, want := readF32(t, gpu, gs.acc, 2), readF32(t, host, hs.acc, 2); !slices.Equal(got, want) {
			t.Fatalf("%s: acc %v, want %v", name, got, want)
		}
		after := readF32(t, gpu, gs.param, gs.paramLen)
		ref := readF32(t, host, hs.param, hs.paramLen)
		for j := range ref {
			if math.Abs(float64(after[j]-ref[j])) > 1e-6*(1+math.Abs(float64(ref[j]))) {
				t.Fatalf("%s: param[%d] = %g, CPU %g", name, j, after[j], ref[j])
			}
		}
		flagged := i >= 2 && i < 4
		if changed := !slices.Equal(after, before); changed == flagged {
			t.Fatalf("%s: parameters changed = %t with the flag set = %t", name, changed, flagged)
		}
		before = after
	}
	if got := readI32(t, gpu, gs.flag, 3); got[0] != 0 {
		t.Errorf("flag %v at the end, want clear", got)
	}
	if st := gpu.Stats(); st.Launches != int64(len(probes)) || st.Gemms != 0 {
		t.Errorf("stats %+v: want one launch per replay", st)
	}
}

// linearStep is a captured step that uses scratch: Linear (padding stash
// on the capacity path) and BiasActDropoutBackward with dbias (column-sum
// partials).
type linearStep struct {
	x, w, y, dbias backend.Buffer
	n              backend.Count
	in, out        int
}

func newLinearStep(t testing.TB, be backend.Backend, r *rand.Rand, cp, live int) *linearStep {
	const in, out = 8, 6
	return &linearStep{x: upload(t, be, randF32(r, cp*in)), w: upload(t, be, randF32(r, in*out)),
		y: alloc(t, be, backend.F32, cp*out), dbias: alloc(t, be, backend.F32, out), n: countBuf(t, be, live, cp),
		in: in, out: out}
}

func (s *linearStep) issue(be backend.Backend) {
	be.Linear(s.x, s.n, s.w, s.in, s.out, s.y, false)
	be.BiasActDropoutBackward(s.y, nil, s.n, s.out, false, 0, nil, s.y, s.dbias)
}

// TestCaptureScratch: after a warm-up step with CapacityGemm a capture
// allocates nothing; without it the capture grows scratch (counted) and
// still works; a scratch block a live graph uses is retired, not reused,
// when an eager op outgrows it, and goes back to the pool when the graph
// is closed.
func TestCaptureScratch(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, warm := range []bool{true, false} {
		b := openTest(t, Options{CapacityGemm: warm})
		s := newLinearStep(t, b, r, 40, 23)
		if warm {
			s.issue(b)
		}
		want := readF32(t, b, s.dbias, s.out)
		if warm {
			b.Fill(s.dbias, 0)
		}
		b.ResetStats()
		g := captureGraph(t, b, func() { s.issue(b) })
		if a := b.Stats().CaptureAllocs; (a == 0) != warm {
			t.Errorf("warm-up %t: %d scratch allocations while capturing", warm, a)
		}
		g.Launch()
		got := readF32(t, b, s.dbias, s.out)
		if !warm {
			want = got // no eager reference: compared after the growth below
		}
		for j := range want {
			if math.Abs(float64(got[j]-want[j])) > 1e-5*(1+math.Abs(float64(want[j]))) {
				t.Fatalf("warm-up %t: replayed dbias %v, eager %v", warm, got, want)
			}
		}
		// An eager op outgrows the column-sum scratch the graph uses.
		old := b.scratch[0][scratchColsum].ptr
		big := newLinearStep(t, b, r, 40000, 39000)
		big.issue(b)
		must(t, b)
		if b.scratch[0][scratchColsum].ptr == old || len(b.retired) == 0 || inPool(b, old) {
			t.Fatalf("outgrown scratch %#x: current %#x, retired %d, in pool %t", old, b.scratch[0][scratchColsum].ptr,
				len(b.retired), inPool(b, old))
		}
		b.Fill(s.dbias, 0)
		g.Launch()
		if got2 := readF32(t, b, s.dbias, s.out); !slices.Equal(got2, got) {
			t.Errorf("warm-up %t: replay after scratch growth gave dbias %v, before %v", warm, got2, got)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if len(b.retired) != 0 || !inPool(b, old) {
			t.Errorf("after Close: %d blocks retired, old block in pool %t", len(b.retired), inPool(b, old))
		}
	}
}

func inPool(b *Backend, p uintptr) bool {
	for _, l := range b.pool.free {
		if slices.Contains(l, p) {
			return true
		}
	}
	return false
}

// TestMarks: marks time device work, are reused after Close and are
// refused while capturing, without breaking the capture.
func TestMarks(t *testing.T) {
	b := openTest(t, Options{})
	var be backend.Backend = b
	timer, ok := be.(backend.Timer)
	if !ok {
		t.Fatal("*Backend is not a backend.Timer")
	}
	const n = 1024
	x := alloc(t, b, backend.F32, n*n)
	y := alloc(t, b, backend.F32, n*n)
	m0, err := timer.Mark()
	if err != nil {
		t.Fatal(err)
	}
	rows := countBuf(t, b, n, n)
	for range 4 {
		b.Linear(x, rows, x, n, n, y, false)
	}
	m1, err := timer.Mark()
	if err != nil {
		t.Fatal(err)
	}
	d, err := m1.Since(m0)
	if err != nil || d <= 0 {
		t.Fatalf("Since = %v, %v: want a positive duration", d, err)
	}
	t.Logf("4 SGEMMs of %d^3: %v device time", n, d)
	m0.Close()
	m1.Close()
	if len(b.events) != 2 {
		t.Errorf("%d events kept for reuse, want 2", len(b.events))
	}
	if m2, err := timer.Mark(); err != nil || len(b.events) != 1 {
		t.Errorf("Mark after Close: %v, %d events left", err, len(b.events))
	} else {
		m2.Close()
	}
	cnt := countBuf(t, b, 0, 1)
	if err := b.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	b.AddCount(cnt, 1, nil)
	if _, err := timer.Mark(); err == nil {
		t.Error("Mark while capturing succeeded")
	}
	g, err := b.EndCapture()
	if err != nil {
		t.Fatalf("EndCapture after a refused Mark: %v", err)
	}
	g.Launch()
	g.Close()
	if v := readCount(t, b, cnt); v != 1 {
		t.Errorf("count %d after one replay", v)
	}
}
