package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// gatRef is a GAT layer's parameters and attention dropout for refGAT.
type gatRef struct {
	w, aSrc, aDst []float32 // [in, heads·dim], [heads, dim], [heads, dim]
	heads, dim    int
	mean          bool
	p             float32
	key           rng.Key // the dropout stream (with p > 0)
}

// refGAT is a GAT layer's output in float64 over the live rows of hb, with
// attention dropout keyed by the destinations' vertex ids.
func refGAT(hb hostBlock, x []float32, in int, g gatRef) []float64 {
	H, D := g.heads, g.dim
	z := make([]float64, hb.nSrc()*H*D)
	for j := range hb.nSrc() {
		for c := range H * D {
			for k := range in {
				z[j*H*D+c] += float64(x[j*in+k]) * float64(g.w[k*H*D+c])
			}
		}
	}
	score := func(j int, a []float32, h int) float64 {
		s := 0.0
		for f := range D {
			s += z[j*H*D+h*D+f] * float64(a[h*D+f])
		}
		return s
	}
	ow := H * D
	if g.mean {
		ow = D
	}
	out := make([]float64, hb.nDst*ow)
	for i := range hb.nDst {
		src := []int{i}
		for e := hb.indptr[i]; e < hb.indptr[i+1]; e++ {
			src = append(src, int(hb.indices[e]))
		}
		for h := range H {
			s, m := make([]float64, len(src)), math.Inf(-1)
			for k, j := range src {
				s[k] = score(j, g.aSrc, h) + score(i, g.aDst, h)
				if s[k] <= 0 {
					s[k] *= gatSlope
				}
				m = math.Max(m, s[k])
			}
			sum := 0.0
			for k := range s {
				s[k] = math.Exp(s[k] - m)
				sum += s[k]
			}
			for k, j := range src {
				a := s[k] / sum
				if g.p > 0 {
					a /= 1 - float64(g.p)
					if g.key.Word(uint32(hb.srcIDs[i]), uint32(k*H+h)) < rng.DropThreshold(g.p) {
						a = 0
					}
				}
				for f := range D {
					v := a * z[j*H*D+h*D+f]
					if g.mean {
						out[i*ow+f] += v / float64(H)
					} else {
						out[i*ow+h*D+f] += v
					}
				}
			}
		}
	}
	return out
}

// TestGATLayerGrad checks a GAT layer's output against refGAT and the
// gradients of its input, weights and attention vectors against finite
// differences, in its projection-first form: heads concatenated (a hidden
// layer) and averaged (the top layer), without and with attention dropout
// (a fixed mask).
func TestGATLayerGrad(t *testing.T) {
	be := newCPU(t)
	blocks, deg := testBlocks(t, be)
	clock := upload(t, be, []int32{2, 7})
	const in = 5
	for _, tc := range []struct {
		heads, dim int
		top        bool
		p          float32
	}{{2, 3, false, 0}, {3, 2, true, 0}, {2, 3, false, 0.4}, {3, 2, true, 0.3}} {
		for name, blk := range blocks {
			t.Run(fmt.Sprintf("%+v/%s", tc, name), func(t *testing.T) {
				// The projection-first form, with its input gradient (the
				// aggregate-first one, gat_first_test.go, has none).
				cfg := Config{Kind: KindGAT, InDim: in, Hidden: tc.heads * tc.dim, Classes: 4, Layers: 2, Heads: tc.heads, OutHeads: tc.heads,
					AttnDropout: tc.p, GATProjectFirst: true}
				if tc.top {
					cfg.Layers, cfg.Classes = 1, tc.dim
				}
				ly, err := newGAT(be, ownParams(be), 0, in, cfg, 11)
				if err != nil {
					t.Fatal(err)
				}
				defer freeParams(be, ly)
				ps := pass{train: true, rand: backend.Rand{Seed: 9, Clock: clock}}
				_, out := cfg.dims(0)
				layerCase(t, be, ly, blk, deg, in, out, ps, func(hb hostBlock, x []float32) []float64 {
					return refGAT(hb, x, in, gatRef{w: readF32(be, ly.w.W), aSrc: readF32(be, ly.attSrc.W), aDst: readF32(be, ly.attDst.W),
						heads: tc.heads, dim: tc.dim, mean: tc.top, p: tc.p,
						key: rng.Key{Seed: 9, Epoch: 2, Step: 7, Stream: attnDropoutStream}})
				})
			})
		}
	}
}

// TestGATEvalNoAttentionDropout: without train, the layer applies no
// attention dropout; with it, the output depends on the clock.
func TestGATEvalNoAttentionDropout(t *testing.T) {
	be := newCPU(t)
	blocks, deg := testBlocks(t, be)
	blk := blocks["all"]
	hb := download(be, blk)
	cfg := Config{Kind: KindGAT, InDim: 4, Hidden: 6, Classes: 3, Layers: 2, Heads: 2, OutHeads: 1, AttnDropout: 0.5}
	ly, err := newGAT(be, ownParams(be), 0, 4, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer freeParams(be, ly)
	if err := ly.reserve(hb.caps); err != nil {
		t.Fatal(err)
	}
	defer ly.release()
	x := upload(t, be, randMatrix(rand.New(rand.NewPCG(3, 4)), hb.caps.Src, hb.nSrc(), 4))
	h := alloc(t, be, backend.F32, hb.caps.Dst*6)
	clock := upload(t, be, []int32{0, 1})
	run := func(ps pass) []float32 {
		ly.prepare(blk, deg)
		ly.forward(blk, x, h, ps)
		return readF32(be, h)[:hb.nDst*6]
	}
	r := backend.Rand{Seed: 4, Clock: clock}
	eval := run(pass{rand: r})
	want := refGAT(hb, readF32(be, x), 4, gatRef{w: readF32(be, ly.w.W), aSrc: readF32(be, ly.attSrc.W), aDst: readF32(be, ly.attDst.W), heads: 2, dim: 3})
	for i, w := range want {
		if math.Abs(float64(eval[i])-w) > 1e-5*(1+math.Abs(w)) {
			t.Fatalf("eval h[%d] = %v, want %v (no dropout)", i, eval[i], w)
		}
	}
	train1 := run(pass{train: true, rand: r})
	be.Write(clock, 1, []int32{2})
	train2 := run(pass{train: true, rand: r})
	if equal(train1, eval) || equal(train1, train2) {
		t.Error("attention dropout does not depend on training and the clock")
	}
}

// TestLayerWork: GAT's products run over every source (the projection
// precedes the attention) and its top layer projects to every output head;
// its aggregate-first bottom layer projects the destinations' aggregates.
func TestLayerWork(t *testing.T) {
	gat := Config{Kind: KindGAT, InDim: 10, Hidden: 8, Classes: 3, Layers: 2, Heads: 4, OutHeads: 2}
	sage := Config{Kind: KindSAGE, InDim: 10, Hidden: 8, Classes: 3, Layers: 2}
	// Aggregate first (the default with an input narrower than the
	// output): 6 input columns per head, each head's projected by its
	// [6, 2] columns of W at the destinations; scores x·u at every row.
	first := gat
	first.InDim = 6
	for _, tc := range []struct {
		cfg  Config
		l    int
		want Work
	}{
		{sage, 0, Work{FLOP: 2 * 5 * 2 * 10 * 8, AggWidth: 10}},
		{gat, 0, Work{FLOP: 2 * 7 * 10 * 8, AggWidth: 8}},
		{gat, 1, Work{FLOP: 2 * 7 * 8 * 2 * 3, AggWidth: 6}},
		{first, 0, Work{FLOP: 2*5*6*8 + 2*(7+5)*6*4, AggWidth: 6}},
	} {
		if got := tc.cfg.LayerWork(tc.l, 5, 7); got != tc.want {
			t.Errorf("%s layer %d: %+v, want %+v", tc.cfg.Kind, tc.l, got, tc.want)
		}
	}
}
