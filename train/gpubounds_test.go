package train

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// The bounds by which the GPU tests hold a run to a reference run: each is
// a stated multiple of the error measured on a GPU (docs/perf.md, or the
// test's comment where it was measured), and the tests log the error they
// measure ("measured relative error"), so a bound without a figure gets one
// from the next GPU run.

// stepBounds is a relative loss bound per step: first at step 0, early at
// the steps before earlySteps, late after (+Inf: the loss need only be
// finite).
type stepBounds struct {
	first, early float64
	earlySteps   int
	late         float64
}

func (b stepBounds) at(i int) float64 {
	switch {
	case i == 0:
		return b.first
	case i < b.earlySteps:
		return b.early
	}
	return b.late
}

// atomicBound holds SAGE, GCN and GIN on the GPU with float32 or 3xTF32
// products to the CPU's losses over 50 tiny steps, and replay to eager on
// the GPU. Measured against the CPU: SAGE 1.2e-7, GCN 0 with float32
// products, 8.4e-7 and 1.2e-7 with 3xTF32 (H200), GIN 1.9e-6 and 3.8e-6
// (H100). But the aggregation backward adds with float atomics, and two
// runs on the same GPU have parted by 1.5e-5 within 50 steps (GCN at step
// 18, in 2 of 12 runs) and by 2.6e-5 within 100 (SAGE; H200,
// TestReplayMatchesEagerCUDA): 1e-4 is 6.7x the first, the flips being what
// a run meets, and 26x GIN's own figure, whose sums add with the same
// atomics.
const atomicBound = 1e-4

// replayBound holds replay to eager on the GPU over 100 tiny steps (see
// atomicBound): 2e-4 is 7.7x the 2.6e-5 measured there.
const replayBound = 2e-4

// replayDrift is TestReplayMatchesEagerCUDA's schedule: replayBound over
// the first 50 steps, then ten times it. Two runs whose atomics added in
// different orders part further the longer they train: GCN's replay and
// eager runs differed by 2.8e-4 at step 88 (H100, 2026-11-26), where a
// flip had been amplified for 40 steps. A fault parts them at once (the
// deterministic path is held to bitwise equality in
// TestReplayBitwiseDeterministicCUDA).
func replayDrift(step int) float64 {
	if step < 50 {
		return replayBound
	}
	return 10 * replayBound
}

// lossBound is how far (relative) a GPU step's loss may be from the CPU's,
// with opt's products, over 5 epochs (50 steps) of tiny.
func lossBound(model string, opt cuda.Options) stepBounds {
	switch {
	case opt.TF32:
		return tf32Bounds[model]
	case model == "gat" && opt.TF32x3:
		// GAT amplifies a last-bit difference about 1.5x a step (H200:
		// within 1.1e-7 of the CPU for 15 steps, 2.5e-6 at step 20, 1e-3
		// by step 40): 1e-5 for the first 20 steps (4x step 20's figure)
		// and 1e-2 after, 4.2x the worst measured (2.4e-3; 4.5e-4 in
		// docs/perf.md's table), kept rather than loosened to 5x: it has
		// passed in every GPU run since.
		return stepBounds{first: 1e-5, early: 1e-5, earlySteps: 20, late: 1e-2}
	case model == "gat":
		// Float32 products: measured 7e-8 (H200; bitwise in a diagnostic
		// run). 1e-5 is issue 10's bound (its attention dropout masks must
		// be the CPU's exactly), 140x the figure: at 1.5x a step, one flip
		// of an atomic sum ten steps before the end would reach 3.5e-6.
		return stepBounds{first: 1e-5, late: 1e-5}
	}
	return stepBounds{first: atomicBound, late: atomicBound}
}

// tf32Bounds hold each model's run with TF32 products (cuBLAS: a 10-bit
// mantissa, 2.6e-4 relative error in a product) to the CPU's. Measured on
// an H200 (docs/perf.md, "TF32 as the default", commit bed1807): the
// relative loss difference at step 0 and the largest after.
var tf32Bounds = map[string]stepBounds{
	// measured 2.6e-6 at step 0 and 3.5e-3 after: 7.7x and 5.7x.
	"sage": {first: 2e-5, late: 2e-2},
	// measured 3.6e-6 and 3.8e-4: 5.6x and 5.3x.
	"gcn": {first: 2e-5, late: 2e-3},
	// measured 9.4e-6 and 8.4e-3 (7.8e-3 in an earlier call): 5.3x and
	// 6x. Loosened from 2e-2 (2.4x): the difference still grows at the
	// last steps (2.6e-3 at step 45, 8.4e-3 at 49; GAT amplifies a
	// difference about 1.5x a step), which leaves a next run no room.
	"gat": {first: 5e-5, late: 5e-2},
	// GIN's sums without normalisation give losses of thousands in the
	// first steps and a chaotic training: TF32 moved the loss by 1.8e-4 at
	// step 0 and by 0.11 at step 5 (0.22 at most, 1.1e-3 at step 49),
	// where float32 stays within 1.9e-6. Step 0: 1e-3, 5.6x. Steps 1 and 2
	// are not measured (the test logs them): at the 3.6x a step by which
	// 1.8e-4 became 0.11 they would be 6.5e-4 and 2.3e-3, and 2e-2 is 9x
	// the second. After step 2 the losses need only be finite, and the
	// trained model is held to the CPU's (trainedClose).
	"gin": {first: 1e-3, early: 2e-2, earlySteps: 3, late: math.Inf(1)},
}

// bf16Bounds hold GraphSAGE and GAT with a bfloat16 option (float32
// products elsewhere) on the GPU to the CPU's run with the same option. A
// last-bit difference before rounding can move a value by one bfloat16
// ulp.
func bf16Bounds(cfg Config) stepBounds {
	if cfg.BottomProducts == "bfloat16" && cfg.Model == "gat" {
		// GAT amplifies a difference about 1.5x a step (tf32Bounds), and a
		// bfloat16 ulp is 8x TF32's: measured 7.6e-3 (at step 49) on one
		// H200 and, failing GraphSAGE's 1e-2, 1.1e-2 at step 46 on
		// another (2026-11-30). TF32's GAT bound, 5e-2: 4.5x.
		return stepBounds{first: 1e-3, late: 5e-2}
	}
	if cfg.BottomProducts == "bfloat16" {
		// Measured 1.5e-3 (H200, docs/perf.md, "A mixed-precision bottom
		// layer"): 1e-2 is 6.7x. Step 0 keeps the 1e-3 it had (not measured
		// apart; the test logs it).
		return stepBounds{first: 1e-3, late: 1e-2}
	}
	// bfloat16 hidden activations: measured 5.5e-5 (H200, docs/perf.md,
	// "bfloat16 hidden activations"): 5e-4 is 9x.
	return stepBounds{first: 5e-4, late: 5e-4}
}

// Trained GIN under TF32 (the steps after its tight ones): after 5 epochs
// of tiny its test accuracy must be within ginAccPoints of the CPU's and
// its test loss within ginLossRel (relative). A TF32 run ends on another
// trajectory, as another seed does; over seeds 1..5 the CPU's runs gave
// test accuracy 0.1411-0.1419 (the model predicts nearly one class of 8 on
// tiny) and test loss 2.073-2.078 (0.24%), and TF32's loss at step 49 was
// 1.1e-3 from the CPU's. 2 points is 25x the seeds' spread of accuracy
// (the "few points" a trained model may move); 1e-2 is 4x their spread of
// loss and 9x TF32's last difference.
const (
	ginAccPoints = 2
	ginLossRel   = 1e-2
)

// lossesFollow holds got to the reference run's losses within bound at
// every step (NaN or infinity failing), logs the measured relative error
// (the largest, and at steps 0, 1, 2, 5, 10, …, and the last) and returns
// the largest.
func lossesFollow(t testing.TB, what string, got, want []float32, bound stepBounds) float64 {
	t.Helper()
	if len(want) < 50 {
		t.Fatalf("%s: %d reference steps, want at least 50", what, len(want))
	}
	worst, err := tolerance.Losses(got, want, bound.at)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var trace []string
	for i := range want {
		if i < 3 || i%5 == 0 || i == len(want)-1 {
			trace = append(trace, fmt.Sprintf("%d:%.1e", i, tolerance.Rel(float64(got[i]), float64(want[i]))))
		}
	}
	t.Logf("%s: %d steps, measured relative error %.2g at most (by step: %s)", what, len(want), worst, strings.Join(trace, " "))
	return worst
}

// relClose fails unless every loss of got is within tol (relative) of want,
// and returns the largest relative difference.
func relClose(t testing.TB, what string, got, want []float32, tol float64) float64 {
	t.Helper()
	worst, err := tolerance.Losses(got, want, tolerance.Every(tol))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return worst
}

// paramsClose holds every parameter of got within tol·(1 + |want|) of
// want's and returns the largest of |got - want| / (1 + |want|).
func paramsClose(t testing.TB, got, want [][]float32, tol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d parameter arrays, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("parameter array %d: %d elements, want %d", i, len(got[i]), len(want[i]))
		}
		for j, w := range want[i] {
			g, scale := float64(got[i][j]), 1+math.Abs(float64(w))
			if err := tolerance.Within(g, float64(w), scale, tol); err != nil {
				t.Fatalf("parameter array %d element %d: %v", i, j, err)
			}
			worst = max(worst, math.Abs(g-float64(w))/scale)
		}
	}
	return worst
}

// trainedClose holds a trained model's test accuracy within accPoints
// (points of 100) and its test loss within lossRel (relative) of the
// reference run's.
func trainedClose(t testing.TB, what string, acc, wantAcc, loss, wantLoss, accPoints, lossRel float64) {
	t.Helper()
	t.Logf("%s: trained test accuracy %.4f (reference %.4f), test loss %.4g (reference %.4g): measured relative error %.2g",
		what, acc, wantAcc, loss, wantLoss, tolerance.Rel(loss, wantLoss))
	if err := tolerance.Within(100*acc, 100*wantAcc, 1, accPoints); err != nil {
		t.Fatalf("%s: test accuracy in points %v", what, err)
	}
	if err := tolerance.Within(loss, wantLoss, math.Abs(wantLoss), lossRel); err != nil {
		t.Fatalf("%s: test loss %v", what, err)
	}
}
