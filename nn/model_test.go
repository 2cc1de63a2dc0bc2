package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// testBatch is a 2-layer sampled batch on sampleGraph with random features
// (dead rows NaN), labels (one ignored, dead entries garbage) and degrees.
type testBatch struct {
	Batch
	caps  []Caps
	clock backend.Buffer
}

func newTestBatch(t *testing.T, be backend.Backend, inDim, classes int, fanouts []int) *testBatch {
	t.Helper()
	g := sampleGraph()
	seeds := []int32{0, 13, 2, 10, 6}
	blocks, caps := sampledBatch(t, be, g, seeds, fanouts, 21)
	r := rand.New(rand.NewPCG(7, 8))
	feat := randMatrix(r, int(g.NumNodes), int(g.NumNodes), inDim)
	src := download(be, blocks[0]).srcIDs
	x := randMatrix(r, caps[0].Src, 0, inDim)
	for i, v := range src {
		copy(x[i*inDim:(i+1)*inDim], feat[int(v)*inDim:(int(v)+1)*inDim])
	}
	labels := make([]int32, caps[len(caps)-1].Dst)
	for i := range labels {
		labels[i] = garbage
	}
	for i := range seeds {
		labels[i] = int32(i % classes)
	}
	labels[3] = -1
	return &testBatch{
		Batch: Batch{
			Blocks: blocks,
			X:      upload(t, be, x),
			Labels: upload(t, be, labels),
			Degree: upload(t, be, degrees(g)),
		},
		caps:  caps,
		clock: upload(t, be, []int32{1, 4}),
	}
}

func newTestModel(t testing.TB, be backend.Backend, cfg Config, caps []Caps) *Model {
	t.Helper()
	m, err := NewModel(be, cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	if err := m.Reserve(caps); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestModelGrad checks every parameter's gradient of the mean loss of a
// 2-layer model, with dropout under a fixed mask, against finite differences;
// and a 3-layer GraphSAGE without dropout (its gathered input gradients
// pass the ReLU by the layer's output instead of the mask).
func TestModelGrad(t *testing.T) {
	for _, name := range []string{KindSAGE, KindGCN, KindGIN, KindGAT, "sage-3-layers"} {
		t.Run(name, func(t *testing.T) {
			be := newCPU(t)
			kind, layers, dropout, fanouts := name, 2, float32(0.3), []int{3, 2}
			if name == "sage-3-layers" {
				kind, layers, dropout, fanouts = KindSAGE, 3, 0, []int{3, 2, 2}
			}
			// GIN with a learned ε: its gradient is checked with the rest.
			cfg := Config{Kind: kind, InDim: 4, Hidden: 6, Classes: 3, Layers: layers, Dropout: dropout, LearnEps: kind == KindGIN}
			if kind == KindGAT {
				// Two heads of 3 columns, then 3 averaged heads of 3 classes,
				// with attention dropout under a fixed mask.
				cfg.Heads, cfg.OutHeads, cfg.AttnDropout = 2, 3, 0.3
			}
			tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, fanouts)
			m := newTestModel(t, be, cfg, tb.caps)
			if kind == KindGAT || layers == 3 {
				awayFromKinks(be, m)
			}
			f := lossAndGrads(t, be, m, tb, backend.Rand{Seed: 5, Clock: tb.clock})
			for _, p := range m.Params() {
				checkGrad(t, be, p.Name, p.W, liveIdx(p.Size()), readF32(be, p.G), f)
			}
			syncOK(t, be)
		})
	}
}

// lossAndGrads runs a training pass of m on tb and its backward (the
// gradients then hold its parameters' derivatives), and returns the loss
// of a training pass as a function for finite differences.
func lossAndGrads(t *testing.T, be backend.Backend, m *Model, tb *testBatch, r backend.Rand) func() float64 {
	t.Helper()
	f := func() float64 {
		loss, _ := m.Loss(&tb.Batch, m.Forward(&tb.Batch, true, r))
		return float64(readF32(be, loss)[0])
	}
	l0 := f()
	m.Backward(&tb.Batch)
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	syncOK(t, be)
	if math.IsNaN(l0) || l0 <= 0 {
		t.Fatalf("loss %v", l0)
	}
	return f
}

// awayFromKinks gives every bias of m values of magnitude 0.2 to 0.5. A
// GAT head whose attention dropout drops every position outputs exactly 0,
// and a zero bias would put the ReLU's kink right there, where a central
// difference sees half a slope.
func awayFromKinks(be backend.Backend, m *Model) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, p := range m.Params() {
		if len(p.Shape) != 1 || p.Shape[0] == 1 {
			continue
		}
		b := make([]float32, p.Size())
		for i := range b {
			b[i] = float32(0.2 + 0.3*r.Float64())
			if r.IntN(2) == 0 {
				b[i] = -b[i]
			}
		}
		be.Write(p.W, 0, b)
	}
}

// TestForwardEvalNoDropout checks that evaluation applies no dropout (its
// logits equal those of the same model built without dropout) and that
// training logits depend on the clock.
func TestForwardEvalNoDropout(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.5}
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2})
	m := newTestModel(t, be, cfg, tb.caps)
	cfg0 := cfg
	cfg0.Dropout = 0
	m0 := newTestModel(t, be, cfg0, tb.caps)
	live := 5 * cfg.Classes
	r := backend.Rand{Seed: 5, Clock: tb.clock}
	eval := readF32(be, m.Forward(&tb.Batch, false, r))[:live]
	plain := readF32(be, m0.Forward(&tb.Batch, true, r))[:live]
	train1 := readF32(be, m.Forward(&tb.Batch, true, r))[:live]
	be.Write(tb.clock, 1, []int32{5})
	train2 := readF32(be, m.Forward(&tb.Batch, true, r))[:live]
	syncOK(t, be)
	for i := range eval {
		if eval[i] != plain[i] {
			t.Fatalf("eval logits[%d] = %v, model without dropout %v", i, eval[i], plain[i])
		}
	}
	if equal(train1, eval) || equal(train1, train2) {
		t.Errorf("training logits do not depend on dropout: eval %v train %v next step %v", eval, train1, train2)
	}
}

func equal(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNewModelValidation(t *testing.T) {
	be := newCPU(t)
	good := Config{Kind: KindGCN, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.5}
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Kind = "gatv2" }, "Kind"},
		{func(c *Config) { c.Heads = 2 }, "Heads"},
		{func(c *Config) { c.AttnDropout = 0.5 }, "AttnDropout"},
		{func(c *Config) { c.OutHeads = 1 }, "OutHeads"},
		{func(c *Config) { c.Kind, c.OutHeads = KindGAT, 1 }, "Heads"},
		{func(c *Config) { c.Kind, c.Heads = KindGAT, 2 }, "OutHeads"},
		{func(c *Config) { c.Kind, c.Heads, c.OutHeads = KindGAT, 3, 1 }, "multiple of Heads"},
		{func(c *Config) { c.Kind, c.Heads, c.OutHeads, c.AttnDropout = KindGAT, 2, 1, 1 }, "AttnDropout"},
		{func(c *Config) { c.InDim = 0 }, "InDim"},
		{func(c *Config) { c.Classes = -1 }, "Classes"},
		{func(c *Config) { c.Layers = 0 }, "Layers"},
		{func(c *Config) { c.Layers = MaxLayers + 1 }, "Layers"},
		{func(c *Config) { c.Hidden = 0 }, "Hidden"},
		{func(c *Config) { c.Dropout = 1 }, "Dropout"},
		{func(c *Config) { c.Dropout = -0.1 }, "Dropout"},
		{func(c *Config) { c.Dropout = float32(math.NaN()) }, "Dropout"},
	} {
		cfg := good
		tc.mod(&cfg)
		m, err := NewModel(be, cfg, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %+v: error %v, want one naming %s", cfg, err, tc.want)
		}
		if m != nil {
			t.Errorf("config %+v: got a model with an error", cfg)
		}
	}
	one := good
	one.Layers, one.Hidden = 1, 0
	m, err := NewModel(be, one, 1)
	if err != nil {
		t.Fatalf("1-layer model without Hidden: %v", err)
	}
	if got := m.Params()[0].Shape; got[0] != 4 || got[1] != 3 {
		t.Errorf("1-layer weight shape %v, want [4 3]", got)
	}
	m.Free()
}

// TestInit checks parameter names and shapes, Glorot bounds, zero biases,
// and that weights are the documented Philox values for the seed.
func TestInit(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindSAGE, InDim: 5, Hidden: 7, Classes: 3, Layers: 2}
	m := newTestModel(t, be, cfg, []Caps{{4, 8, 12}, {2, 4, 4}})
	wantNames := []string{"layer0.w_self", "layer0.w_neigh", "layer0.bias", "layer1.w_self", "layer1.w_neigh", "layer1.bias"}
	ps := m.Params()
	if len(ps) != len(wantNames) {
		t.Fatalf("%d params, want %d", len(ps), len(wantNames))
	}
	for i, p := range ps {
		if p.Name != wantNames[i] {
			t.Errorf("param %d named %q, want %q", i, p.Name, wantNames[i])
		}
		w := readF32(be, p.W)
		if len(p.Shape) == 1 {
			for _, v := range w {
				if v != 0 {
					t.Fatalf("%s: bias not zero: %v", p.Name, w)
				}
			}
			continue
		}
		in, out := p.Shape[0], p.Shape[1]
		a := float32(math.Sqrt(6 / float64(in+out)))
		key := rng.Key{Seed: 42, Step: uint32(i % 3), Stream: uint32(initStream + i/3)}
		for j, v := range w {
			if want := rng.UniformFloat(key.Word(uint32(j/out), uint32(j%out)), -a, a); v != want {
				t.Fatalf("%s[%d] = %v, want %v", p.Name, j, v, want)
			}
		}
	}
	m2, err := NewModel(be, cfg, 43)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Free()
	if equal(readF32(be, m.Params()[0].W), readF32(be, m2.Params()[0].W)) {
		t.Error("seeds 42 and 43 give the same weights")
	}
	if equal(readF32(be, m.Params()[0].W), readF32(be, m.Params()[1].W)) {
		t.Error("w_self and w_neigh are equal")
	}
}

// TestBatchErrors checks that a batch outside the envelope is reported by
// CheckBatch and made sticky by Forward, which then issues nothing.
func TestBatchErrors(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindGCN, InDim: 4, Hidden: 6, Classes: 3, Layers: 2}
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2})
	m, err := NewModel(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.CheckBatch(&tb.Batch); err == nil || !strings.Contains(err.Error(), "Reserve") {
		t.Errorf("before Reserve: %v", err)
	}
	if err := m.Reserve(tb.caps[:1]); err == nil {
		t.Error("Reserve with 1 caps for 2 layers succeeded")
	}
	bad := []Caps{{Dst: 4, Edges: 4, Src: 3}, {Dst: 2, Edges: 2, Src: 4}}
	if err := m.Reserve(bad); err == nil {
		t.Error("Reserve with Src < Dst succeeded")
	}
	if err := m.Reserve([]Caps{{Dst: 4, Edges: 4, Src: 8}, {Dst: 2, Edges: 2, Src: 5}}); err == nil {
		t.Error("Reserve with a source capacity above the block below's destinations succeeded")
	}
	if err := m.Reserve(tb.caps); err != nil {
		t.Fatal(err)
	}
	noDeg := tb.Batch
	noDeg.Degree = nil
	if err := m.CheckBatch(&noDeg); err == nil || !strings.Contains(err.Error(), "Degree") {
		t.Errorf("GCN without Degree: %v", err)
	}
	grown := append([]Caps(nil), tb.caps...)
	grown[0].Edges++
	if err := m.Reserve(grown); err != nil {
		t.Fatal(err)
	}
	logits := m.Forward(&tb.Batch, false, backend.Rand{})
	if err := m.Err(); err == nil || !strings.Contains(err.Error(), "caps") {
		t.Fatalf("Forward on a batch outside the envelope: Err() = %v", err)
	}
	if logits == nil {
		t.Error("Forward returned nil logits after Reserve")
	}
	m.Backward(&tb.Batch) // must not run
	syncOK(t, be)
}

// TestBackwardNeedsLoss checks the call-order error.
func TestBackwardNeedsLoss(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindSAGE, InDim: 4, Hidden: 6, Classes: 3, Layers: 2}
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2})
	m := newTestModel(t, be, cfg, tb.caps)
	m.Forward(&tb.Batch, false, backend.Rand{})
	m.Backward(&tb.Batch)
	if err := m.Err(); err == nil || !strings.Contains(err.Error(), "Loss") {
		t.Errorf("Backward without Loss: Err() = %v", err)
	}
}

// TestAfterBottom: a training pass calls Batch.AfterBottom once, when the
// bottom layer's output is already written (it equals the output after the
// pass, not the evaluation pass's before it); an evaluation pass does not
// call it.
func TestAfterBottom(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 3, Dropout: 0.5}
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2, 2})
	m := newTestModel(t, be, cfg, tb.caps)
	r := backend.Rand{Seed: 5, Clock: tb.clock}
	calls := 0
	var atCall []float32
	tb.AfterBottom = func() {
		calls++
		atCall = readF32(be, m.hid[0])
	}
	m.Forward(&tb.Batch, false, r)
	eval := readF32(be, m.hid[0])
	if calls != 0 {
		t.Fatalf("an evaluation pass called AfterBottom %d times", calls)
	}
	m.Forward(&tb.Batch, true, r)
	syncOK(t, be)
	if calls != 1 {
		t.Fatalf("a training pass called AfterBottom %d times, want once", calls)
	}
	if train := readF32(be, m.hid[0]); !equal(atCall, train) || equal(train, eval) {
		t.Errorf("bottom layer output when AfterBottom ran %v; want the training pass's %v, not the evaluation pass's %v", atCall[:4], train[:4], eval[:4])
	}
}
