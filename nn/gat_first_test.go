package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// Tests of GAT's aggregate-first bottom layer (gat_first.go): its ops'
// gradients, the layer against the float64 reference and finite
// differences, and the model against the same model in today's form.

func TestSharedAggregateGrad(t *testing.T) {
	be := cpuBackend(t)
	hb := goldenBlock()
	for _, tc := range []struct {
		heads, in int
		bip       bool
	}{{1, 3, false}, {2, 3, false}, {3, 2, true}} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			blk := hb.upload(t, be)
			blk.Bipartite = tc.bip
			r := rand.New(rand.NewPCG(41, uint64(tc.heads)))
			H, w, c := tc.heads, tc.heads*tc.in, hb.caps
			pos := perHead(livePositions(hb, tc.bip), H)
			coefHost := make([]float32, (c.Dst+c.Edges)*H)
			for _, i := range pos {
				coefHost[i] = float32(r.Float64())
			}
			coef := upload(t, be, coefHost)
			x := upload(t, be, randMatrix(r, c.Src, hb.nSrc(), tc.in))
			R := randMatrix(r, c.Dst, hb.nDst, w)
			out := alloc(t, be, backend.F32, c.Dst*w)
			f := func() float64 {
				be.SharedAggregate(blk, coef, x, H, tc.in, out)
				return dot(readF32(be, out), R, hb.nDst*w)
			}
			dcoef := alloc(t, be, backend.F32, (c.Dst+c.Edges)*H)
			be.SharedAggregateBackward(blk, x, upload(t, be, R), H, tc.in, dcoef)
			syncOK(t, be)
			checkGrad(t, be, "dcoef", coef, pos, readF32(be, dcoef), f)
		})
	}
}

// TestHeadLinearGrad: HeadLinear's x and w gradients against finite
// differences, 5 live rows of 7.
func TestHeadLinearGrad(t *testing.T) {
	be := cpuBackend(t)
	const capRows, live, in, heads, dim = 7, 5, 3, 2, 4
	r := rand.New(rand.NewPCG(51, 52))
	n := backend.Count{Buf: upload(t, be, []int32{live}), Cap: capRows}
	x := upload(t, be, randMatrix(r, capRows, live, heads*in))
	w := upload(t, be, randMatrix(r, in, in, heads*dim))
	R := randMatrix(r, capRows, live, heads*dim)
	y := alloc(t, be, backend.F32, capRows*heads*dim)
	f := func() float64 {
		be.HeadLinear(x, n, w, heads, in, dim, y)
		return dot(readF32(be, y), R, live*heads*dim)
	}
	dR := upload(t, be, R)
	dx := alloc(t, be, backend.F32, capRows*heads*in)
	dw := alloc(t, be, backend.F32, in*heads*dim)
	be.HeadLinearBackwardData(dR, n, w, heads, in, dim, dx)
	be.HeadLinearBackwardWeight(x, dR, n, heads, in, dim, dw)
	syncOK(t, be)
	checkGrad(t, be, "dx", x, liveIdx(live*heads*in), readF32(be, dx), f)
	checkGrad(t, be, "dw", w, liveIdx(in*heads*dim), readF32(be, dw), f)
}

// TestGATFirstLayerGrad: the aggregate-first layer's output against
// refGAT (the projection first, in float64) and its weights' and
// attention vectors' gradients against finite differences, without and
// with attention dropout (a fixed mask).
func TestGATFirstLayerGrad(t *testing.T) {
	be := newCPU(t)
	blocks, _ := testBlocks(t, be)
	clock := upload(t, be, []int32{2, 7})
	const in = 5
	for _, tc := range []struct {
		heads, dim int
		p          float32
	}{{2, 3, 0}, {3, 2, 0}, {2, 4, 0}, {2, 3, 0.4}} {
		for name, blk := range blocks {
			t.Run(fmt.Sprintf("%+v/%s", tc, name), func(t *testing.T) {
				cfg := Config{Kind: KindGAT, InDim: in, Hidden: tc.heads * tc.dim, Classes: 4, Layers: 2, Heads: tc.heads,
					OutHeads: 1, AttnDropout: tc.p}
				ly, err := newGAT(be, ownParams(be), 0, in, cfg, 11)
				if err != nil {
					t.Fatal(err)
				}
				defer freeParams(be, ly)
				if !ly.aggFirst {
					t.Fatal("the bottom layer is not in its aggregate-first form")
				}
				hb := download(be, blk)
				if err := ly.reserve(hb.caps); err != nil {
					t.Fatal(err)
				}
				defer ly.release()
				r := rand.New(rand.NewPCG(1, 2))
				xHost := randMatrix(r, hb.caps.Src, hb.nSrc(), in)
				x := upload(t, be, xHost)
				out := tc.heads * tc.dim
				R := randMatrix(r, hb.caps.Dst, hb.nDst, out)
				h := alloc(t, be, backend.F32, hb.caps.Dst*out)
				ps := pass{train: true, rand: backend.Rand{Seed: 9, Clock: clock}}
				f := func() float64 {
					ly.forward(blk, x, h, ps)
					return dot(readF32(be, h), R, hb.nDst*out)
				}
				f()
				got := readF32(be, h)
				want := refGAT(hb, xHost, in, gatRef{w: readF32(be, ly.w.W), aSrc: readF32(be, ly.attSrc.W), aDst: readF32(be, ly.attDst.W),
					heads: tc.heads, dim: tc.dim, p: tc.p, key: rng.Key{Seed: 9, Epoch: 2, Step: 7, Stream: attnDropoutStream}})
				for i, v := range want {
					if math.Abs(float64(got[i])-v) > 1e-5*(1+math.Abs(v)) {
						t.Fatalf("forward h[%d] = %v, want %v", i, got[i], v)
					}
				}
				ly.backward(blk, x, upload(t, be, R), nil)
				syncOK(t, be)
				for _, p := range ly.params() {
					if len(p.Shape) == 2 {
						checkGrad(t, be, p.Name, p.W, liveIdx(p.Size()), readF32(be, p.G), f)
					}
				}
				syncOK(t, be)
			})
		}
	}
}

// TestGATAggregateFirstMatches: a 2-layer GAT in its default
// (aggregate-first) form and the same model with GATProjectFirst, built
// from the same seed (so with the same
// parameters), give the same evaluation logits, training loss and
// gradients of every parameter on one batch, with and without attention
// and hidden dropout, over float32 features and features rounded to
// bfloat16 (as a bfloat16 table's rows are gathered). The two forms
// associate the same products differently (x·(W·a) against (x·W)·a, and
// Σα·(x·W) against (Σα·x)·W), each in float32 with float64 dots where the
// ops have them, so they agree to a few float32 roundings per sum: a
// value passes at 2e-5 of its tensor's largest magnitude (some 300 ulps of
// float32 at that scale, far below any change of the computation, which
// moves the values by orders more).
func TestGATAggregateFirstMatches(t *testing.T) {
	for _, tc := range []struct {
		p    float32
		bf16 bool
	}{{0, false}, {0.3, false}, {0, true}, {0.3, true}} {
		t.Run(fmt.Sprintf("dropout=%v/bf16=%t", tc.p, tc.bf16), func(t *testing.T) {
			be := newCPU(t)
			cfg := Config{Kind: KindGAT, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Heads: 2, OutHeads: 3,
				Dropout: tc.p, AttnDropout: tc.p}
			tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2})
			if tc.bf16 {
				x := readF32(be, tb.X)
				for i, v := range backend.ToBF16(x) {
					x[i] = backend.BF16Float(v)
				}
				tb.X = upload(t, be, x)
			}
			first := newTestModel(t, be, cfg, tb.caps)
			cfg.GATProjectFirst = true
			today := newTestModel(t, be, cfg, tb.caps)
			if ly := first.layers[0].(*gatLayer); !ly.aggFirst || today.layers[0].(*gatLayer).aggFirst {
				t.Fatal("the flag does not select the bottom layer's form")
			}
			r := backend.Rand{Seed: 5, Clock: tb.clock}
			closeTo(t, "eval logits", readF32(be, first.Forward(&tb.Batch, false, r)), readF32(be, today.Forward(&tb.Batch, false, r)), 3*5)
			lf := lossAndGrads(t, be, first, tb, r)()
			lt := lossAndGrads(t, be, today, tb, r)()
			if math.Abs(lf-lt) > 2e-5*math.Abs(lt) {
				t.Errorf("loss %v, today's form %v", lf, lt)
			}
			pt := today.Params()
			for k, p := range first.Params() {
				if p.Name != pt[k].Name || !equal(readF32(be, p.W), readF32(be, pt[k].W)) {
					t.Fatalf("parameter %s differs from today's %s", p.Name, pt[k].Name)
				}
				closeTo(t, p.Name+" gradient", readF32(be, p.G), readF32(be, pt[k].G), p.Size())
			}
		})
	}
}

// closeTo fails when an element of got[:n] differs from want's by more
// than 2e-5 of want[:n]'s largest magnitude.
func closeTo(t *testing.T, what string, got, want []float32, n int) {
	t.Helper()
	scale := 0.0
	for _, v := range want[:n] {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	if scale == 0 {
		t.Fatalf("%s: all zero", what)
	}
	for i := range n {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= 2e-5*scale) {
			t.Fatalf("%s[%d] = %v, today's form %v (scale %.3g)", what, i, got[i], want[i], scale)
		}
	}
}

// TestGATAggregateFirstWhere: GATProjectFirst is refused for other kinds,
// naming it; the aggregate-first form applies by default, and not where
// the bottom layer does not concatenate its heads, its input is not
// narrower than its output, or GATProjectFirst is set.
func TestGATAggregateFirstWhere(t *testing.T) {
	sage := Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, GATProjectFirst: true}
	if err := sage.Validate(); err == nil || !strings.Contains(err.Error(), "GATProjectFirst") {
		t.Errorf("sage with GATProjectFirst: %v, want an error naming the field", err)
	}
	gat := Config{Kind: KindGAT, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Heads: 2, OutHeads: 1}
	for _, tc := range []struct {
		name string
		mod  func(c *Config)
		want bool
	}{
		{"narrow input", func(c *Config) {}, true},
		{"input as wide as the output", func(c *Config) { c.InDim = 8 }, false},
		{"one layer (heads averaged)", func(c *Config) { c.Layers = 1 }, false},
		{"GATProjectFirst", func(c *Config) { c.GATProjectFirst = true }, false},
	} {
		c := gat
		tc.mod(&c)
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		in, _ := c.dims(0)
		if got := c.aggregatesFirst(0, in); got != tc.want {
			t.Errorf("%s: aggregate-first %t, want %t", tc.name, got, tc.want)
		}
		if c.aggregatesFirst(1, c.Hidden) {
			t.Errorf("%s: layer 1 aggregates first", tc.name)
		}
	}
}

// TestGATReadsBF16Rows: the aggregate-first bottom layer given its input
// rows as bfloat16 gives the bits it gives on their float32 widening (the
// logits, the loss and every gradient, with attention and input dropout);
// the projection-first form, more heads than ScoreProducts takes, and GCN
// read float32 rows only, and a bfloat16 X is refused there, naming it.
func TestGATReadsBF16Rows(t *testing.T) {
	be := newCPU(t)
	cfg := Config{Kind: KindGAT, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Heads: 2, OutHeads: 3,
		Dropout: 0.3, AttnDropout: 0.3, InputDropout: 0.2}
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2})
	bits := backend.ToBF16(readF32(be, tb.X))
	wide := make([]float32, len(bits))
	for i, v := range bits {
		wide[i] = backend.BF16Float(v)
	}
	m := newTestModel(t, be, cfg, tb.caps)
	if !m.ReadsBF16Rows() {
		t.Fatal("the aggregate-first GAT does not read bfloat16 rows")
	}
	r := backend.Rand{Seed: 5, Clock: tb.clock}
	run := func(x backend.Buffer) (logits []float32, loss float64, grads [][]float32) {
		tb.X = x
		logits = readF32(be, m.Forward(&tb.Batch, false, r))
		loss = lossAndGrads(t, be, m, tb, r)()
		for _, p := range m.Params() {
			grads = append(grads, readF32(be, p.G))
		}
		return logits, loss, grads
	}
	lw, sw, gw := run(upload(t, be, wide))
	lh, sh, gh := run(upload(t, be, bits))
	if !equal(lh, lw) || sh != sw {
		t.Fatalf("bfloat16 rows: logits or loss %v differ from the widened rows' (%v)", sh, sw)
	}
	for k, p := range m.Params() {
		if !equal(gh[k], gw[k]) {
			t.Errorf("%s gradient differs with bfloat16 rows", p.Name)
		}
	}
	for _, tc := range []struct {
		name string
		mod  func(c *Config)
	}{
		{"projection first", func(c *Config) { c.GATProjectFirst = true }},
		{"heads past ScoreProducts'", func(c *Config) { c.Heads, c.Hidden = backend.MaxScoreHeads+1, 2*(backend.MaxScoreHeads+1) }},
		{"gcn", func(c *Config) { c.Kind, c.Heads, c.OutHeads, c.AttnDropout = KindGCN, 0, 0, 0 }},
	} {
		c := cfg
		tc.mod(&c)
		o := newTestModel(t, be, c, tb.caps)
		if o.ReadsBF16Rows() {
			t.Errorf("%s: reads bfloat16 rows", tc.name)
		}
		tb.X = upload(t, be, bits)
		if err := o.CheckBatch(&tb.Batch); err == nil || !strings.Contains(err.Error(), "X") {
			t.Errorf("%s: a bfloat16 X gives %v, want an error naming X", tc.name, err)
		}
	}
}
