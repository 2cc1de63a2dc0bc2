package nn

import (
	"fmt"
	"strings"
	"testing"
)

// refGIN is h = ReLU(agg·W1 + b1)·W2 in float64 with agg_i = x_i +
// Σ_e w_i·x_j, w_i = min(deg_i, fanout)/sampled (deg_i/sampled with
// fanout < 0), as GINWeights documents (ε = 0).
func refGIN(hb hostBlock, x, w1, b1, w2, deg []float32, fanout, in, out int) []float64 {
	h := make([]float64, hb.nDst*out)
	for i := 0; i < hb.nDst; i++ {
		agg := make([]float64, in)
		for k := range agg {
			agg[k] = float64(x[i*in+k])
		}
		lo, hi := hb.indptr[i], hb.indptr[i+1]
		d := float64(deg[hb.srcIDs[i]])
		if fanout >= 0 {
			d = min(d, float64(fanout))
		}
		for e := lo; e < hi; e++ {
			j := int(hb.indices[e])
			for k := range agg {
				agg[k] += d / float64(hi-lo) * float64(x[j*in+k])
			}
		}
		z := make([]float64, out)
		for o := range z {
			z[o] = float64(b1[o])
			for k := 0; k < in; k++ {
				z[o] += agg[k] * float64(w1[k*out+o])
			}
			z[o] = max(z[o], 0)
		}
		for o := 0; o < out; o++ {
			for k := range z {
				h[i*out+o] += z[k] * float64(w2[k*out+o])
			}
		}
	}
	return h
}

// TestGINLayerGrad checks GIN's sum weights against the reference and the
// layer's gradients by finite differences, for a layer trained on every
// neighbour (the sampled sum estimates the full one), on 1 and on 2
// sampled neighbours: the block sampled at fanout 2 then sums its samples
// at weight 1, the block of all neighbours at min(deg, k)/deg.
func TestGINLayerGrad(t *testing.T) {
	be := newCPU(t)
	blocks, deg := testBlocks(t, be)
	degHost := readF32(be, deg)
	const in, out = 5, 4
	for _, fanout := range []int{-1, 1, 2} {
		for name, blk := range blocks {
			t.Run(fmt.Sprintf("trained%d/%s", fanout, name), func(t *testing.T) {
				cfg := Config{Kind: KindGIN, InDim: in, Hidden: out, Classes: 2, Layers: 2, GINFanouts: fmt.Sprintf("%d,7", fanout)}
				ly, err := newGINNormed(be, ownParams(be), cfg, 1, in, out, 11) // the top layer: hop 0's fanout
				if err != nil {
					t.Fatal(err)
				}
				defer freeParams(be, ly)
				if ly.fanout != fanout {
					t.Fatalf("layer 1 of GINFanouts %q sums as trained on %d, want %d", cfg.GINFanouts, ly.fanout, fanout)
				}
				be.Write(ly.b1.W, 0, []float32{0.3, -0.2, 0.1, -0.4}) // some units off: ReLU's gradient is checked
				layerCase(t, be, ly, blk, deg, in, out, pass{}, func(hb hostBlock, x []float32) []float64 {
					return refGIN(hb, x, readF32(be, ly.w1.W), readF32(be, ly.b1.W), readF32(be, ly.w2.W), degHost, fanout, in, out)
				})
			})
		}
	}
}

// TestGINFanoutsConfig: GINFanouts is parsed per hop from the seeds, and
// a malformed value, a count other than the layers' or another kind is
// refused naming the field.
func TestGINFanoutsConfig(t *testing.T) {
	base := Config{Kind: KindGIN, InDim: 3, Hidden: 4, Classes: 2, Layers: 3}
	c := base
	c.GINFanouts = "15, 10,-1"
	fs, err := c.ginFanouts()
	if err != nil || fmt.Sprint(fs) != "[15 10 -1]" {
		t.Fatalf("GINFanouts %q: %v, %v; want [15 10 -1]", c.GINFanouts, fs, err)
	}
	for _, bad := range []struct{ kind, fanouts, want string }{
		{KindGIN, "15,10", "2 values for 3 layers"},
		{KindGIN, "15,x,5", `value 2 "x"`},
		{KindGIN, "15,-2,5", `value 2 "-2"`},
		{KindSAGE, "15,10,5", `only "gin"`},
	} {
		c := base
		c.Kind, c.GINFanouts = bad.kind, bad.fanouts
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "GINFanouts") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Kind %s GINFanouts %q: error %v, want one naming GINFanouts and %q", bad.kind, bad.fanouts, err, bad.want)
		}
	}
}
