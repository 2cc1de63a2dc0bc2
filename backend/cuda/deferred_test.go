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

// linearScript is a sequence of Linear ops in the shape of a SAGE layer's
// forward and backward, with the corner cases of deferred padding restores:
// one output written twice, one input summed twice, a stashed input used
// as an output, the same matrix as both inputs, operands that overlap
// without being the same matrix, outputs that are views whose padding rows
// are live data of a larger buffer, and other ops in between.
type linearScript struct {
	cp, live, in, out int
	names             []string
	host              [][]float32
	scratch           []string // buffers declared by ScratchPadding before the script
	zeroed            []string // of those, the ones whose padding rows may then hold zeros
}

func newLinearScript(r *rand.Rand) *linearScript {
	s := &linearScript{cp: 40, live: 29, in: 12, out: 16}
	add := func(name string, n int) {
		s.names = append(s.names, name)
		s.host = append(s.host, randF32(r, n))
	}
	cp, in, out := s.cp, s.in, s.out
	add("xParent", (cp+8)*in) // x: rows [0, cp) a view; rows past live are live data of the parent
	add("agg", cp*in)
	add("h", cp*out)
	add("dh", cp*out)
	add("dAgg", cp*in)
	add("dxParent", (cp+8)*in)
	add("wSelf", in*out)
	add("wNeigh", in*out)
	add("gSelf", in*out)
	add("gNeigh", in*out)
	add("gHH", out*out)
	add("gShift", in*in)
	add("bias", out)
	return s
}

// run issues the script on be and returns every buffer's contents.
func (s *linearScript) run(t *testing.T, be backend.Backend) [][]float32 {
	bufs := map[string]backend.Buffer{}
	for i, name := range s.names {
		bufs[name] = upload(t, be, s.host[i])
	}
	for _, name := range s.scratch {
		backend.ScratchPadding(be, bufs[name])
	}
	cp, in, out := s.cp, s.in, s.out
	n := countBuf(t, be, s.live, cp)
	x := be.View(bufs["xParent"], 0, cp*in)
	xShift := be.View(bufs["xParent"], in, cp*in) // overlaps x, not the same matrix
	dxDst := be.View(bufs["dxParent"], 0, cp*in)
	h, dh, agg := bufs["h"], bufs["dh"], bufs["agg"]
	be.Linear(x, n, bufs["wSelf"], in, out, h, false)
	be.Linear(agg, n, bufs["wNeigh"], in, out, h, true)
	be.BiasActDropout(h, n, out, bufs["bias"], true, 0, backend.Rand{}, nil, h)
	be.LinearBackwardWeight(x, dh, n, in, out, bufs["gSelf"], false)
	be.LinearBackwardWeight(agg, dh, n, in, out, bufs["gNeigh"], false)
	be.LinearBackwardData(dh, n, bufs["wNeigh"], in, out, bufs["dAgg"], false)
	be.LinearBackwardWeight(h, h, n, out, out, bufs["gHH"], false)
	be.LinearBackwardData(dh, n, bufs["wSelf"], in, out, dxDst, true)
	be.LinearBackwardData(dh, n, bufs["wNeigh"], in, out, dxDst, true)
	be.LinearBackwardWeight(x, xShift, n, in, in, bufs["gShift"], false)
	be.Linear(bufs["dAgg"], n, bufs["wSelf"], in, out, dh, false) // a summed input becomes an output
	be.LinearBackwardWeight(agg, dh, n, in, out, bufs["gNeigh"], true)
	be.Fill(bufs["bias"], 0.5)
	be.LinearBackwardData(dh, n, bufs["wSelf"], in, out, dxDst, true)
	got := make([][]float32, len(s.names))
	for i, name := range s.names {
		got[i] = readF32(t, be, bufs[name], len(s.host[i]))
	}
	return got
}

// TestDeferredPadsMatchExact: the script on the capacity path (deferred
// stashes) gives the exact path's results: weight gradients and live rows
// within rounding, every other element bit for bit, except the padding rows
// of outputs that an op overwrote (unspecified).
func TestDeferredPadsMatchExact(t *testing.T) {
	s := newLinearScript(rand.New(rand.NewPCG(41, 42)))
	exact := s.run(t, openTest(t, Options{}))
	capB := openTest(t, Options{CapacityGemm: true})
	got := s.run(t, capB)
	if len(capB.pads) != 0 {
		t.Errorf("%d padding regions still stashed after reads", len(capB.pads))
	}
	s.compare(t, got, exact)
}

// compare checks got against the exact path's results (see
// TestDeferredPadsMatchExact).
func (s *linearScript) compare(t *testing.T, got, exact [][]float32) {
	t.Helper()
	rowsLive := map[string]int{"xParent": s.in, "agg": s.in, "h": s.out, "dh": s.out, "dAgg": s.in, "dxParent": s.in}
	overwritten := map[string]bool{"h": true, "dh": true, "dAgg": true}
	for _, name := range s.zeroed {
		overwritten[name] = true // declared: its padding rows are the backend's
	}
	for i, name := range s.names {
		cols, rowed := rowsLive[name]
		for j := range got[i] {
			g, w := got[i][j], exact[i][j]
			if rowed && j >= s.live*cols {
				if !overwritten[name] && math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("%s[%d] (row %d, past the live rows) = %g, exact path %g", name, j, j/cols, g, w)
				}
				continue
			}
			if math.Abs(float64(g-w)) > 1e-4*(1+math.Abs(float64(w))) {
				t.Fatalf("%s[%d] = %g, exact path %g", name, j, g, w)
			}
		}
	}
}

// TestScratchPadding: with agg and dh declared by ScratchPadding, and
// xParent too (the script multiplies only a view of it, whose padding rows
// are live data of xParent), the capacity path still gives the exact
// path's results, xParent's rows bit for bit (compare); the padding rows
// of agg (summed, never written) are zeroed in place instead of stashed and
// put back, and the script takes fewer launches than undeclared.
func TestScratchPadding(t *testing.T) {
	s := newLinearScript(rand.New(rand.NewPCG(47, 48)))
	exact := s.run(t, openTest(t, Options{}))
	plain := openTest(t, Options{CapacityGemm: true})
	s.run(t, plain)
	s.scratch = []string{"agg", "dh", "xParent"}
	s.zeroed = []string{"agg", "dh"}
	b := openTest(t, Options{CapacityGemm: true})
	got := s.run(t, b)
	s.compare(t, got, exact)
	agg := got[slices.Index(s.names, "agg")]
	for j := s.live * s.in; j < len(agg); j++ {
		if agg[j] != 0 {
			t.Fatalf("agg[%d] (a padding row of a declared buffer) = %g, want the zero put there in place", j, agg[j])
		}
	}
	if b.stats.Launches >= plain.stats.Launches {
		t.Fatalf("%d launches with declared buffers, %d without: want fewer (no stash, no restore)", b.stats.Launches, plain.stats.Launches)
	}
	t.Logf("launches: %d declared, %d undeclared", b.stats.Launches, plain.stats.Launches)
}

// TestDeferredPadsCapture: the script captured and replayed equals the
// exact path too, and the capture leaves no region stashed.
func TestDeferredPadsCapture(t *testing.T) {
	s := newLinearScript(rand.New(rand.NewPCG(43, 44)))
	exact := s.run(t, openTest(t, Options{}))
	b := openTest(t, Options{})
	r := rand.New(rand.NewPCG(45, 46))
	in, out, cp := 8, 6, 30
	x, y := upload(t, b, randF32(r, cp*in)), upload(t, b, randF32(r, (cp+4)*out))
	w := upload(t, b, randF32(r, in*out))
	n := countBuf(t, b, 21, cp)
	before := readF32(t, b, y, (cp+4)*out)
	g := captureGraph(t, b, func() {
		yv := b.View(y, 0, cp*out)
		b.Linear(x, n, w, in, out, yv, true)
		b.Linear(x, n, w, in, out, yv, true)
	})
	defer g.Close()
	if len(b.pads) != 0 {
		t.Fatalf("%d regions stashed after EndCapture", len(b.pads))
	}
	g.Launch()
	after := readF32(t, b, y, (cp+4)*out)
	for i := 21 * out; i < len(after); i++ {
		if math.Float32bits(after[i]) != math.Float32bits(before[i]) {
			t.Fatalf("y[%d] past the live rows changed by the replay: %g, was %g", i, after[i], before[i])
		}
	}
	// The whole script on the capacity path of a fresh backend, for
	// completeness of the comparison with a second seed.
	s.compare(t, s.run(t, openTest(t, Options{CapacityGemm: true})), exact)
}

// TestAdamQueue: Adam calls queued into one launch give the CPU backend's
// results, with parameters of many sizes, a parameter updated twice in a
// row, configurations that change between calls, more parameters than one
// launch takes, the skip flag, and reads and frees in between.
func TestAdamQueue(t *testing.T) {
	b := openTest(t, Options{})
	ref := cpu.New(1)
	r := rand.New(rand.NewPCG(51, 52))
	sizes := []int{1, 1000, 3000, 257, 65536, 5, 1024, 1025}
	for len(sizes) < adamMax+3 {
		sizes = append(sizes, 1+r.IntN(3000))
	}
	type param struct{ gpu, cpu [4]backend.Buffer }
	ps := make([]param, len(sizes))
	for i, n := range sizes {
		for k := range 4 {
			h := randF32(r, n)
			if k == 3 {
				for j := range h {
					h[j] *= h[j]
				}
			}
			ps[i].gpu[k] = upload(t, b, h)
			hc := append([]float32(nil), h...)
			ps[i].cpu[k], _ = ref.Upload(hc)
		}
	}
	tG, tC := countBuf(t, b, 3, 1), backend.Count{Cap: 1}
	tC.Buf, _ = ref.Upload([]int32{3})
	skipG, skipC := upload(t, b, []int32{0}), backend.Buffer(nil)
	skipC, _ = ref.Upload([]int32{0})
	cfgA := backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	cfgB := backend.AdamConfig{LR: 0.003, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 5e-4}
	both := func(i int, cfg backend.AdamConfig, skip bool) {
		p := ps[i]
		cg, cc := cfg, cfg
		if skip {
			cg.Skip, cc.Skip = skipG, skipC
		}
		b.Adam(p.gpu[0], p.gpu[1], p.gpu[2], p.gpu[3], tG, cg)
		ref.Adam(p.cpu[0], p.cpu[1], p.cpu[2], p.cpu[3], tC, cc)
	}
	for i := range ps {
		both(i, cfgA, false)
	}
	both(2, cfgA, false) // the same parameter again: sees the first update
	both(3, cfgB, false)
	both(4, cfgA, true)
	b.Write(skipG, 0, []int32{1})
	ref.Write(skipC, 0, []int32{1})
	both(5, cfgA, true) // skipped
	both(6, cfgA, false)
	for i := range ps {
		for k, name := range []string{"param", "grad", "m", "v"} {
			n := sizes[i]
			got := readF32(t, b, ps[i].gpu[k], n)
			want := make([]float32, n)
			ref.Read(want, ps[i].cpu[k], 0)
			for j := range got {
				if math.Abs(float64(got[j]-want[j])) > 1e-6*(1+math.Abs(float64(want[j]))) {
					t.Fatalf("parameter %d (%d elements) %s[%d] = %g, CPU %g", i, n, name, j, got[j], want[j])
				}
			}
		}
	}
	// A queued update is launched before its buffer is freed.
	extra := upload(t, b, []float32{1})
	zero := upload(t, b, []float32{0})
	b.Adam(ps[0].gpu[0], ps[0].gpu[1], ps[0].gpu[2], ps[0].gpu[3], tG, cfgA)
	b.Free(extra)
	b.Free(zero)
	if len(b.adamQ.ts) != 0 {
		t.Errorf("%d Adam calls queued after Free", len(b.adamQ.ts))
	}
	must(t, b)
}

// TestBiasActDropoutBackwardLarge: the vectorized backward and its column
// sums over many chunks match a float64 reference (the conformance suite
// covers small shapes).
func TestBiasActDropoutBackwardLarge(t *testing.T) {
	b := openTest(t, Options{})
	r := rand.New(rand.NewPCG(61, 62))
	for _, sh := range [][3]int{{5000, 4321, 256}, {3000, 2999, 100}, {1000, 1000, 47}} {
		cp, live, dim := sh[0], sh[1], sh[2]
		t.Run(fmt.Sprintf("%dx%d", live, dim), func(t *testing.T) {
			dy := randF32(r, cp*dim)
			mask := make([]uint8, cp*dim) // the ReLU's gate included: y is not read
			for i := range mask {
				mask[i] = uint8(r.IntN(2))
			}
			dx := alloc(t, b, backend.F32, cp*dim)
			dbias := alloc(t, b, backend.F32, dim)
			b.BiasActDropoutBackward(upload(t, b, dy), nil, countBuf(t, b, live, cp), dim, true, 0.5,
				upload(t, b, mask), dx, dbias)
			got := readF32(t, b, dx, cp*dim)
			sums := make([]float64, dim)
			for i := range live * dim {
				g := float64(dy[i]) * float64(mask[i]) * 2
				if float64(got[i]) != g {
					t.Fatalf("dx[%d] = %g, want %g", i, got[i], g)
				}
				sums[i%dim] += g
			}
			if e := relErr(readF32(t, b, dbias, dim), sums); e > 1e-5 {
				t.Errorf("dbias relative error %g", e)
			}
		})
	}
}

// TestStructArgLayout: the hand-made struct parameters have the sizes the
// kernels assert (kernels/util.cu, kernels/adam.cu).
func TestStructArgLayout(t *testing.T) {
	var pr structArg
	for range maxPads {
		pr.ptr(1).ptr(2).ptr(3).i32(4).i32(5).i32(6).i32(7)
	}
	if n := len(pr.i32(1).done()); n != 168 {
		t.Errorf("PadRegions: %d bytes, want 168", n)
	}
	var at structArg
	at.ptr(1).ptr(2).ptr(3).ptr(4).i64(5).i64(6).zeros(48 * (adamMax - 1)).i32(1)
	if n := len(at.done()); n != 776 {
		t.Errorf("AdamTable: %d bytes, want 776", n)
	}
}

// TestFlagCountsLayout: flag_overflows' parameter (kernels/steps.cu).
func TestFlagCountsLayout(t *testing.T) {
	var s structArg
	for range flagMax {
		s.ptr(1)
	}
	for range flagMax {
		s.i32(2)
	}
	if n := len(s.i32(3).done()); n != 104 {
		t.Errorf("FlagCounts: %d bytes, want 104", n)
	}
}

// TestFlagOverflowQueue: queued checks keep the order of the calls (the
// first overflowing count's clock is recorded once), more checks than one
// launch takes, and a change of flag buffer in between.
func TestFlagOverflowQueue(t *testing.T) {
	b := openTest(t, Options{})
	vals := make([]int32, 11)
	for i := range vals {
		vals[i] = int32(i)
	}
	cnt := upload(t, b, vals)
	clock := upload(t, b, []int32{3, 9})
	flagA, flagB := upload(t, b, []int32{0, 0, 0}), upload(t, b, []int32{0, 0, 0})
	at := func(i, cp int) backend.Count { return backend.Count{Buf: cnt, Off: i, Cap: cp} }
	for i := range 10 {
		b.FlagOverflow(at(i, i), clock, flagA) // never over
	}
	b.FlagOverflow(at(10, 9), clock, flagB) // over: flagB
	b.FlagOverflow(at(5, 4), clock, flagA)  // over: flagA, clock {3, 9}
	b.Write(clock, 0, []int32{4, 1})
	b.FlagOverflow(at(7, 6), clock, flagA) // over again: flagA keeps {1, 3, 9}
	equalI32(t, "flagA", readI32(t, b, flagA, 3), []int32{1, 3, 9})
	equalI32(t, "flagB", readI32(t, b, flagB, 3), []int32{1, 3, 9})
	b.Write(flagA, 0, []int32{0, 0, 0})
	for i := range 9 {
		b.FlagOverflow(at(i, i), clock, flagA)
	}
	b.FlagOverflow(at(3, 2), clock, flagA) // the tenth check in a row
	equalI32(t, "flagA after reset", readI32(t, b, flagA, 3), []int32{1, 4, 1})
	if len(b.flagQ.cs) != 0 {
		t.Errorf("%d checks queued after a read", len(b.flagQ.cs))
	}
}

// TestFillLarge: large 4-byte fills at aligned and unaligned views leave
// the elements around them untouched.
func TestFillLarge(t *testing.T) {
	b := openTest(t, Options{})
	const n = 200003
	buf := upload(t, b, make([]float32, n))
	cases := []struct {
		off, len int
		v        float32
	}{{0, n, 1.5}, {4, 100001, 2.5}, {1, 70001, -3}, {8, 1 << 16, 4}, {12, 1<<16 + 5, 5}} // sizes around 2^16 words
	want := make([]float32, n)
	for _, cs := range cases {
		b.Fill(b.View(buf, cs.off, cs.len), float64(cs.v))
		for i := cs.off; i < cs.off+cs.len; i++ {
			want[i] = cs.v
		}
		got := readF32(t, b, buf, n)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("after Fill(view [%d, %d), %g): [%d] = %g, want %g", cs.off, cs.off+cs.len, cs.v, i, got[i], want[i])
			}
		}
	}
	ib := upload(t, b, make([]int32, n))
	b.Fill(ib, -7)
	for i, v := range readI32(t, b, ib, n) {
		if v != -7 {
			t.Fatalf("int32 fill: [%d] = %d", i, v)
		}
	}
}
