package record_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/graph"
)

// Sizes of the miniature training step.
const (
	numNodes, feat, classes = 60, 6, 3
	batch, fanout           = 8, 4
)

// stepState is every buffer of one miniature training step: slice seeds,
// sample and relabel one hop, gather features, mean-aggregate, a linear
// layer, loss, weight gradient, Adam (skipped on overflow) and the
// accumulators, then advance the clock.
type stepState struct {
	g                       backend.Graph
	perm, feats, labels     backend.Buffer
	clock, flag, acc        backend.Buffer
	seeds, seedLabels       backend.Buffer
	blk                     *backend.Block
	x, edgeW, agg           backend.Buffer
	w, logits, dlogits, dw  backend.Buffer
	m, v, loss, correct, t  backend.Buffer
	clockStep, correctCount backend.Count
}

// newStep uploads the same data for any backend; capEdges sets the
// envelope (a small value overflows on some steps).
func newStep(t *testing.T, be backend.Backend, capEdges int) *stepState {
	t.Helper()
	rnd := rand.New(rand.NewPCG(7, 11))
	indptr := make([]int64, numNodes+1)
	var indices []int32
	for v := range numNodes {
		for range rnd.IntN(9) {
			indices = append(indices, int32(rnd.IntN(numNodes)))
		}
		indptr[v+1] = int64(len(indices))
	}
	g, err := be.UploadGraph(&graph.CSR{NumNodes: numNodes, Indptr: indptr, Indices: indices})
	if err != nil {
		t.Fatalf("UploadGraph: %v", err)
	}
	up := func(data any) backend.Buffer {
		b, err := be.Upload(data)
		if err != nil {
			t.Fatalf("Upload: %v", err)
		}
		return b
	}
	alloc := func(dt backend.DType, n int) backend.Buffer {
		b, err := be.Alloc(dt, n)
		if err != nil {
			t.Fatalf("Alloc: %v", err)
		}
		return b
	}
	perm, labels := make([]int32, numNodes), make([]int32, numNodes)
	for i, p := range rnd.Perm(numNodes) {
		perm[i], labels[i] = int32(p), int32(rnd.IntN(classes))
	}
	f32 := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rnd.NormFloat64())
		}
		return s
	}
	capSrc := batch + capEdges
	s := &stepState{
		g: g, perm: up(perm), feats: up(f32(numNodes * feat)), labels: up(labels),
		clock: up([]int32{1, 0}), flag: alloc(backend.I32, 3), acc: alloc(backend.F32, 2),
		seeds: alloc(backend.I32, batch), seedLabels: alloc(backend.I32, batch),
		x: alloc(backend.F32, capSrc*feat), edgeW: alloc(backend.F32, capEdges),
		agg: alloc(backend.F32, batch*feat), w: up(f32(feat * classes)),
		logits: alloc(backend.F32, batch*classes), dlogits: alloc(backend.F32, batch*classes),
		dw: alloc(backend.F32, feat*classes), m: alloc(backend.F32, feat*classes),
		v: alloc(backend.F32, feat*classes), loss: alloc(backend.F32, 1),
		correct: alloc(backend.I32, 1), t: alloc(backend.I32, 1),
	}
	counts := alloc(backend.I32, 3)
	s.blk = &backend.Block{
		NumDst:   backend.Count{Buf: counts, Off: 0, Cap: batch},
		NumEdges: backend.Count{Buf: counts, Off: 1, Cap: capEdges},
		NumSrc:   backend.Count{Buf: counts, Off: 2, Cap: capSrc},
		Indptr:   alloc(backend.I32, batch+1), Nbrs: alloc(backend.I32, capEdges),
		Indices: alloc(backend.I32, capEdges), SrcIDs: alloc(backend.I32, capSrc),
	}
	s.clockStep = backend.Count{Buf: s.clock, Off: 1, Cap: math.MaxInt32 - 1}
	s.correctCount = backend.Count{Buf: s.correct, Cap: batch}
	if err := be.Sync(); err != nil {
		t.Fatalf("setup: %v", err)
	}
	return s
}

// run issues one step's ops.
func (s *stepState) run(be backend.Backend) {
	blk := s.blk
	be.SliceSeeds(s.perm, numNodes, batch, s.clock, s.seeds, blk.NumDst)
	be.SampleLayer(s.g, s.seeds, blk.NumDst, fanout, backend.Rand{Seed: 99, Clock: s.clock}, blk)
	be.Relabel(s.g, blk)
	be.FlagOverflow(blk.NumEdges, s.clock, s.flag)
	be.FlagOverflow(blk.NumSrc, s.clock, s.flag)
	be.Gather(s.feats, feat, blk.SrcIDs, blk.NumSrc, s.x)
	be.MeanWeights(blk, s.edgeW)
	be.Aggregate(blk, s.edgeW, nil, s.x, feat, s.agg)
	be.Linear(s.agg, blk.NumDst, s.w, feat, classes, s.logits, false)
	be.Gather(s.labels, 1, s.seeds, blk.NumDst, s.seedLabels)
	be.SoftmaxCrossEntropy(s.logits, s.seedLabels, blk.NumDst, backend.Count{}, classes, s.loss, s.dlogits, s.correctCount)
	be.LinearBackwardWeight(s.agg, s.dlogits, blk.NumDst, feat, classes, s.dw, false)
	tc := backend.Count{Buf: s.t, Cap: math.MaxInt32 - 1}
	be.AddCount(tc, 1, s.flag)
	be.Adam(s.w, s.dw, s.m, s.v, tc, backend.AdamConfig{LR: 0.05, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Skip: s.flag})
	be.Accumulate(s.loss, s.correctCount, s.acc, s.flag)
	be.AddCount(s.clockStep, 1, nil)
}

// snapshot reads the state a step changes, as raw bits.
func (s *stepState) snapshot(t *testing.T, be backend.Backend) map[string][]uint32 {
	t.Helper()
	out := map[string][]uint32{}
	for name, b := range map[string]backend.Buffer{"w": s.w, "m": s.m, "v": s.v, "acc": s.acc} {
		f := make([]float32, b.Len())
		be.Read(f, b, 0)
		for _, x := range f {
			out[name] = append(out[name], math.Float32bits(x))
		}
	}
	for name, b := range map[string]backend.Buffer{"clock": s.clock, "flag": s.flag, "t": s.t} {
		i := make([]int32, b.Len())
		be.Read(i, b, 0)
		for _, x := range i {
			out[name] = append(out[name], uint32(x))
		}
	}
	if err := be.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return out
}

// TestReplayEqualsEager: a step captured once and launched N times leaves
// every parameter, moment, accumulator, counter and flag bit-identical to N
// eager executions, with an ample envelope and with one that overflows
// (where the flagged steps must not touch the parameters).
func TestReplayEqualsEager(t *testing.T) {
	const launches = 9 // 7 full batches, a partial one, one past the end
	for _, tc := range []struct {
		name     string
		capEdges int
		overflow bool
	}{{"ample", batch * fanout, false}, {"tight", 28, true}} {
		t.Run(tc.name, func(t *testing.T) {
			eager := cpu.New(2)
			defer eager.Close()
			es := newStep(t, eager, tc.capEdges)
			for range launches {
				es.run(eager)
			}
			want := es.snapshot(t, eager)

			rb := record.New(cpu.New(2))
			defer rb.Close()
			rs := newStep(t, rb, tc.capEdges)
			if err := rb.BeginCapture(); err != nil {
				t.Fatalf("BeginCapture: %v", err)
			}
			rs.run(rb)
			rp, err := rb.EndCapture()
			if err != nil {
				t.Fatalf("EndCapture: %v", err)
			}
			if got := rp.(*record.Replay).Len(); got != 16 {
				t.Errorf("recorded %d op calls, want 16", got)
			}
			if clk := rs.snapshot(t, rb)["clock"]; clk[1] != 0 {
				t.Fatalf("clock step after capture is %d: the capture ran ops", clk[1])
			}
			for range launches {
				rp.Launch()
			}
			got := rs.snapshot(t, rb)
			for name, w := range want {
				if !equalBits(got[name], w) {
					t.Errorf("%s after %d launches differs from eager:\n got %v\nwant %v", name, launches, got[name], w)
				}
			}
			// Ample: every step updates; tight: some steps update before the
			// first overflow, none after.
			steps := int(want["t"][0])
			t.Logf("%d Adam steps, flag %v", steps, want["flag"])
			if tc.overflow != (steps > 0 && steps < launches) || (!tc.overflow && steps != launches) {
				t.Errorf("eager run made %d Adam steps of %d (flag %v); the case does not test what it says",
					steps, launches, want["flag"])
			}
			if err := rp.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

func equalBits(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
