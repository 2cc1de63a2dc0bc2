package link

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/train"
)

// TestStepGradient: the step's gradients (pair products, the decoder,
// binary cross-entropy and the model's backward pass through them) equal
// central differences of its loss at entries of every tensor, the model's
// and the decoder's, for both decoders and two models, and for negatives
// shared by the step and taken in batch.
//
// The loss is float32, so a central difference carries rounding error
// (about 2 ulps of the loss over the step), truncation error, and, where
// the step crosses a ReLU's kink, the kink's; all show as disagreement
// between the differences at four step sizes (eps, eps/2, eps/4, eps/8),
// which bounds the finest: the gradient must lie within three times the
// largest disagreement, plus the rounding bound and 0.1% of the value (a
// kink within eps/4 of the point, as one hidden unit of gcn's step has on
// the ring, shows only in the finest step's disagreement).
// The test must also be able to fail: every tensor needs an entry whose
// difference exceeds twice its bound, where a zero or sign-flipped
// gradient would be out of it (measured on the ring: gradients of 1e-4 to
// 1e-1, bounds of 1e-5 to 1e-4 away from kinks).
func TestStepGradient(t *testing.T) {
	ds := ringData(t, 120)
	for _, c := range []struct {
		model, decoder string
		cfg            train.Config
	}{
		{"gcn", train.DecoderDot, ringConfig()}, {"sage", train.DecoderMLP, ringConfig()},
		{"sage", train.DecoderDot, sharedConfig(5, train.DistUniform)}, {"sage", train.DecoderMLP, inBatchConfig(5)},
	} {
		t.Run(fmt.Sprintf("%s/%s/%s/%s", c.model, c.decoder, c.cfg.Link.NegativeDist, c.cfg.Link.NegativeSharing), func(t *testing.T) {
			cfg := c.cfg
			cfg.Model, cfg.Link.Decoder, cfg.Dropout, cfg.Batch = c.model, c.decoder, 0, 16
			if c.decoder == train.DecoderDot {
				cfg.Link.DecoderWidth = 0
			}
			tr := newTrainer(t, cpu.New(1), ds, cfg, train.Options{})
			if c.decoder == train.DecoderMLP {
				// Hidden units on (+0.1) and off (-0.1), away from the ReLU's
				// kink: the products at initialisation are far smaller.
				b1 := cpu.F32(tr.Head().Params()[1].W)
				for i := range b1 {
					b1[i] = 0.1 - 0.2*float32(i%2)
				}
			}
			p := stepPlan(t, tr, 1)
			nb, out, lossBuf := stepLoss(tr, p)
			p.Task.Backward(nb, out)
			tr.Model().Backward(nb)
			if err := tr.Backend().Sync(); err != nil {
				t.Fatal(err)
			}
			base := float64(cpu.F32(lossBuf)[0])
			loss := func() float64 {
				_, _, l := stepLoss(tr, p)
				return float64(cpu.F32(l)[0])
			}
			for _, prm := range tr.Params() {
				w, g := cpu.F32(prm.W)[:prm.Size()], slices.Clone(cpu.F32(prm.G)[:prm.Size()])
				strong := 0
				for _, i := range probe(g) {
					d := differences(w, i, loss, base)
					what := fmt.Sprintf("%s[%d]", prm.Name, i)
					t.Logf("%s: gradient %.6g, difference %.6g, bound %.3g", what, g[i], d.fd, d.bound)
					if math.Abs(float64(g[i])-d.fd) > d.bound {
						t.Errorf("%s: gradient %g, central difference %g (bound %.3g)", what, g[i], d.fd, d.bound)
					}
					if math.Abs(d.fd) > 2*d.bound {
						strong++ // here a zero or sign-flipped gradient fails
					}
				}
				if strong == 0 {
					t.Errorf("%s: no entry where a zero or sign-flipped gradient would fail the check", prm.Name)
				}
			}
		})
	}
}

// probe picks distinct entries of a gradient to check: the three largest
// in magnitude, the first and the last.
func probe(g []float32) []int {
	idx := make([]int, len(g))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return -cmpAbs(g[a], g[b]) })
	out := append([]int(nil), idx[:min(3, len(idx))]...)
	for _, i := range []int{0, len(g) - 1} {
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

func cmpAbs(a, b float32) int {
	switch x, y := math.Abs(float64(a)), math.Abs(float64(b)); {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// difference is a central difference of the loss and its error bound.
type difference struct{ fd, bound float64 }

// differences measures the central differences of loss at w[i] with steps
// eps, eps/2, eps/4 and eps/8 and bounds the error of the finest: three times the
// largest disagreement of consecutive ones (truncation, kinks), the
// rounding of two float32 losses over its step, and 0.1% of the value.
// w[i] is left as it was.
func differences(w []float32, i int, loss func() float64, base float64) difference {
	const eps = 1e-2
	orig := w[i]
	central := func(h float32) float64 {
		w[i] = orig + h
		up := loss()
		w[i] = orig - h
		down := loss()
		w[i] = orig
		// The step actually taken, in float32.
		return (up - down) / (float64(orig+h) - float64(orig-h))
	}
	coarse, mid, fine, finest := central(eps), central(eps/2), central(eps/4), central(eps/8)
	ulp := math.Abs(base) * 0x1p-23
	spread := max(math.Abs(mid-coarse), math.Abs(fine-mid), math.Abs(finest-fine))
	return difference{fd: finest, bound: 3*spread + 4*ulp/(eps/8) + 1e-3*math.Abs(finest)}
}
