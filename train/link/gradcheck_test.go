package link

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// gradTensor is one learned tensor of a link trainer: its weights and
// gradient (F32, n values) and its name.
type gradTensor struct {
	name string
	w, g backend.Buffer
	n    int
}

// gradTensors are every learned tensor of tr: the model's (running
// statistics left out) and the decoder's.
func gradTensors(tr *Trainer) []gradTensor {
	var out []gradTensor
	for _, p := range tr.m.Params() {
		if !p.Buffer {
			out = append(out, gradTensor{p.Name, p.W, p.G, p.Size()})
		}
	}
	for _, p := range tr.dec.params {
		out = append(out, gradTensor{p.Name, p.W, p.G, p.Rows * p.Cols})
	}
	return out
}

// loss64 issues tr's step (clock 0, 1) and returns its binary
// cross-entropy in float64, from the float32 scores: the float32 loss the
// backend rounds to (an ulp of 6e-8 at 0.7) would be the finite
// differences' largest error.
func loss64(t *testing.T, tr *Trainer) float64 {
	tr.be.Write(tr.plan.Clock, 0, []int32{0, 1})
	tr.issueLoss()
	live := make([]int32, 1)
	tr.be.Read(live, tr.positives.Buf, tr.positives.Off)
	if err := tr.be.Sync(); err != nil {
		t.Fatal(err)
	}
	pairs := int(live[0]) * (1 + tr.cfg.Negatives)
	s := make([]float32, pairs)
	tr.be.Read(s, tr.scores, 0)
	var sum float64
	for p, v := range s {
		l, _, _ := cpu.BCE(v, p < int(live[0]))
		sum += l
	}
	return sum / float64(max(pairs, 1))
}

// fdCheck is one entry's finite-difference check: the central
// differences at three steps, 2^-10, 2^-11 and 2^-12 (powers of two, so
// that w ± h is exact for the weights here, |w| < 2), the middle one as
// the reference, and the bound on its error that they measure: four
// times the largest change between consecutive steps (the truncation
// error falls by 4 per halving, the rounding error grows by 2, so the
// change bounds both; a ReLU's kink within the largest step shows as a
// large change), and at least 1e-3 of the reference, for the float32
// gradient's own rounding (its sums over rows; measured up to 1.9e-4
// relative against differences that agree to 3e-5 among themselves).
type fdCheck struct {
	diffs      []float64
	num, bound float64
}

func measure(t *testing.T, tr *Trainer, w backend.Buffer, i int) fdCheck {
	x := make([]float32, 1)
	tr.be.Read(x, w, i)
	orig := x[0]
	var c fdCheck
	for _, h := range []float32{0x1p-10, 0x1p-11, 0x1p-12} {
		tr.be.Write(w, i, []float32{orig + h})
		up := loss64(t, tr)
		tr.be.Write(w, i, []float32{orig - h})
		down := loss64(t, tr)
		step := float64(orig+h) - float64(orig-h) // exact: the step taken
		c.diffs = append(c.diffs, (up-down)/step)
	}
	tr.be.Write(w, i, []float32{orig})
	c.num = c.diffs[1]
	for k := 1; k < len(c.diffs); k++ {
		c.bound = max(c.bound, 4*math.Abs(c.diffs[k]-c.diffs[k-1]))
	}
	c.bound = max(c.bound, 1e-3*math.Abs(c.num))
	return c
}

// passes is the check of an analytic gradient g against the entry's
// finite difference (false for a NaN on either side).
func (c fdCheck) passes(g float64) bool { return math.Abs(g-c.num) <= c.bound }

// TestStepGradient: the step's gradients (pair products, the decoder,
// binary cross-entropy and the model's backward pass through them) equal
// central differences of its loss, for both decoders and two models, at
// the three entries of largest gradient of every learned tensor (all of a
// smaller one), within the error the differences measure. Every entry
// checked has a difference well above that error, so the check tells a
// gradient from a zeroed or a sign-flipped one, and the test asserts that
// both fail it at every entry. Measured here: the gradients checked are
// 0.0037 to 0.14, the analytic ones miss the differences by at most 0.15
// of the bound, and the smallest difference is 13 times its bound (a
// zeroed gradient misses by 13 bounds, a sign-flipped one by 26). The
// bound of 2e-3 this test had before admitted both at gradients of 3e-4
// to 9e-4.
func TestStepGradient(t *testing.T) {
	ds := ringData(t, 120)
	for _, c := range []struct{ model, decoder string }{{"gcn", DecoderDot}, {"sage", DecoderMLP}} {
		t.Run(c.model+"/"+c.decoder, func(t *testing.T) {
			cfg := ringConfig()
			cfg.Model, cfg.Decoder, cfg.Dropout, cfg.Batch = c.model, c.decoder, 0, 16
			tr := inOrder(t, cpu.New(1), ds, cfg)
			if c.decoder == DecoderMLP {
				// Hidden units on (+0.1) and off (-0.1), away from the ReLU's
				// kink: the products at initialisation are far smaller.
				b1 := cpu.F32(tr.dec.params[1].W)
				for i := range b1 {
					b1[i] = 0.1 - 0.2*float32(i%2)
				}
			}
			tr.be.Write(tr.plan.Clock, 0, []int32{0, 1})
			tr.issueGrads(tr.issueLoss())
			if err := tr.be.Sync(); err != nil {
				t.Fatal(err)
			}
			tensors := gradTensors(tr)
			if want := 2*cfg.Layers + 4*btoi(c.decoder == DecoderMLP); len(tensors) < want {
				t.Fatalf("%d learned tensors, want at least %d", len(tensors), want)
			}
			for _, p := range tensors {
				g := slices.Clone(cpu.F32(p.g)[:p.n])
				for _, i := range largest(g, 3) {
					what := fmt.Sprintf("%s[%d]", p.name, i)
					fd := measure(t, tr, p.w, i)
					a := float64(g[i])
					t.Logf("%s: gradient %.6g, differences %.6g, bound %.3g", what, a, fd.diffs, fd.bound)
					if !fd.passes(a) {
						t.Errorf("%s: gradient %g, central difference %g (error bound %.3g)", what, a, fd.num, fd.bound)
					}
					if fd.passes(0) || fd.passes(-a) {
						t.Errorf("%s: a zeroed (%t) or sign-flipped (%t) gradient passes: the difference %g does not stand above its error %.3g",
							what, fd.passes(0), fd.passes(-a), fd.num, fd.bound)
					}
				}
			}
		})
	}
}

// largest are the indices of the (at most) n entries of g of largest
// magnitude, distinct, largest first.
func largest(g []float32, n int) []int {
	idx := make([]int, len(g))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(math.Abs(float64(g[b])), math.Abs(float64(g[a]))) })
	return idx[:min(n, len(idx))]
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
