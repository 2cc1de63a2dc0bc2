package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestInferenceMatchesForward runs a 2-layer model layer by layer over one
// full-neighbour block whose destinations are every vertex, and compares it
// with Forward over the two-hop batch sampled with all neighbours from every
// vertex. The inference is made before the parameters are set, so it must
// share them rather than copy them.
func TestInferenceMatchesForward(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGIN, KindGAT} {
		t.Run(kind, func(t *testing.T) {
			cfg := Config{Kind: kind, InDim: 4, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5}
			if kind == KindGAT {
				cfg.Heads, cfg.OutHeads, cfg.AttnDropout = 3, 2, 0.5
			}
			inferenceMatchesForward(t, cfg)
		})
	}
}

// inferenceMatchesForward: a 2-layer model of cfg with random parameters
// (buffers, variances among them, positive) gives every vertex the same
// logits by layer-wise inference as by evaluation's Forward over blocks of
// all neighbours.
func inferenceMatchesForward(t *testing.T, cfg Config) {
	be := newCPU(t)
	g := sampleGraph()
	n := int(g.NumNodes)
	seeds := make([]int32, n)
	for v := range seeds {
		seeds[v] = int32(v)
	}
	blocks, caps := sampledBatch(t, be, g, seeds, []int{-1, -1}, 3)
	m := newTestModel(t, be, cfg, caps)
	inf, err := m.NewInference(caps[1])
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Free()
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range m.Params() {
		w := randMatrix(r, p.Size(), p.Size(), 1)
		if p.Buffer {
			for i := range w {
				w[i] = float32(math.Abs(float64(w[i]))) + 0.1
			}
		}
		be.Write(p.W, 0, w)
	}
	feat := randMatrix(r, n, n, cfg.InDim)
	x := randMatrix(r, caps[0].Src, 0, cfg.InDim)
	for i, v := range download(be, blocks[0]).srcIDs {
		copy(x[i*cfg.InDim:], feat[int(v)*cfg.InDim:(int(v)+1)*cfg.InDim])
	}
	deg := upload(t, be, degrees(g))
	b := &Batch{Blocks: blocks, X: upload(t, be, x), Degree: deg}
	want := readF32(be, m.Forward(b, false, backend.Rand{}))

	top := blocks[1] // destinations: every vertex, in id order
	h1 := alloc(t, be, backend.F32, top.NumDst.Cap*cfg.Hidden)
	out := alloc(t, be, backend.F32, top.NumDst.Cap*cfg.Classes)
	if err := inf.Layer(0, top, upload(t, be, feat), deg, h1); err != nil {
		t.Fatal(err)
	}
	if err := inf.Layer(1, top, h1, deg, out); err != nil {
		t.Fatal(err)
	}
	syncOK(t, be)
	got := readF32(be, out)
	for i := range n * cfg.Classes {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-5*max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("vertex %d class %d: layer-wise %v, Forward %v", i/cfg.Classes, i%cfg.Classes, got[i], want[i])
		}
	}
}

func TestInferenceErrors(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindGCN, InDim: 4, Hidden: 6, Classes: 3, Layers: 2}
	m, err := NewModel(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if _, err := m.NewInference(Caps{Dst: 3, Edges: 4, Src: 2}); err == nil {
		t.Fatal("NewInference accepted Src < Dst")
	}
	hb := goldenBlock()
	inf, err := m.NewInference(hb.caps)
	if err != nil {
		t.Fatal(err)
	}
	blk := hb.upload(t, be)
	table := alloc(t, be, backend.F32, 13*cfg.InDim)
	deg := alloc(t, be, backend.F32, 13)
	out := alloc(t, be, backend.F32, hb.caps.Dst*cfg.Hidden)
	big := *blk
	big.NumEdges.Cap++
	for _, c := range []struct {
		name            string
		l               int
		blk             *backend.Block
		table, deg, out backend.Buffer
		want            string
	}{
		{"layer", 2, blk, table, deg, out, "out of range"},
		{"caps", 0, &big, table, deg, out, "exceed"},
		{"table width", 1, blk, table, deg, out, "table"},
		{"short out", 0, blk, table, deg, alloc(t, be, backend.F32, 5), "out must be"},
		{"degrees", 0, blk, table, nil, out, "degree"},
	} {
		err := inf.Layer(c.l, c.blk, c.table, c.deg, c.out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if err := inf.Layer(0, blk, table, deg, out); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	syncOK(t, be)
	inf.Free()
	if err := inf.Layer(0, blk, table, deg, out); err == nil {
		t.Fatal("Layer after Free was accepted")
	}
}
