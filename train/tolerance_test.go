package train

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// notFinite are the values a GPU check must never pass.
var notFinite = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}

// fallingLosses is 50 finite losses, as a tiny run gives.
func fallingLosses() []float32 {
	l := make([]float32, 50)
	for i := range l {
		l[i] = 2 / (1 + float32(i)/10)
	}
	return l
}

// everyBound is every bound schedule the GPU tests use, by name.
func everyBound() map[string]stepBounds {
	all := map[string]stepBounds{
		"bfloat16 bottom products":     bf16Bounds(Config{BottomProducts: "bfloat16"}),
		"bfloat16 bottom products gat": bf16Bounds(Config{Model: "gat", BottomProducts: "bfloat16"}),
		"bfloat16 activations":         bf16Bounds(Config{Activations: "bfloat16"}),
	}
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		for _, opt := range []cuda.Options{{}, {TF32x3: true}, {TF32: true}} {
			all[fmt.Sprintf("%s %+v", model, opt)] = lossBound(model, opt)
		}
	}
	return all
}

// TestGPUChecksRejectNaN: a NaN or an infinity planted in a GPU run's
// losses (or in the reference's) fails every check the GPU tests make, at
// every bound they use, at the first steps, in the middle and at the last,
// while equal finite runs pass.
func TestGPUChecksRejectNaN(t *testing.T) {
	want := fallingLosses()
	planted := func(v float64, step int) []float32 {
		got := slices.Clone(want)
		got[step] = float32(v)
		return got
	}
	mustFail := func(what string, check func(tb testing.TB)) {
		t.Helper()
		if _, failed := tolerance.Fails(check); !failed {
			t.Errorf("%s: passed", what)
		}
	}
	for name, b := range everyBound() {
		if msg, failed := tolerance.Fails(func(tb testing.TB) { lossesFollow(tb, name, want, want, b) }); failed {
			t.Errorf("%s: equal losses fail: %s", name, msg)
		}
		for _, v := range notFinite {
			for _, step := range []int{0, 1, 2, 25, 49} {
				bad := planted(v, step)
				mustFail(fmt.Sprintf("lossesFollow, %s, %v at step %d", name, v, step),
					func(tb testing.TB) { lossesFollow(tb, name, bad, want, b) })
				mustFail(fmt.Sprintf("lossesFollow, %s, %v at reference step %d", name, v, step),
					func(tb testing.TB) { lossesFollow(tb, name, want, bad, b) })
			}
		}
	}
	params := [][]float32{{0.5, -1, 2}, {3}}
	for _, v := range notFinite {
		bad := planted(v, 7)
		mustFail(fmt.Sprintf("relClose, %v", v), func(tb testing.TB) { relClose(tb, "replay", bad, want, replayBound) })
		badParams := [][]float32{{0.5, float32(v), 2}, {3}}
		mustFail(fmt.Sprintf("paramsClose, %v", v), func(tb testing.TB) { paramsClose(tb, badParams, params, 1e-3) })
		mustFail(fmt.Sprintf("paramsClose, %v in the reference", v), func(tb testing.TB) { paramsClose(tb, params, badParams, 1e-3) })
		mustFail(fmt.Sprintf("trainedClose, accuracy %v", v), func(tb testing.TB) {
			trainedClose(tb, "gin", v, 0.14, 2.07, 2.07, ginAccPoints, ginLossRel)
		})
		mustFail(fmt.Sprintf("trainedClose, loss %v", v), func(tb testing.TB) {
			trainedClose(tb, "gin", 0.14, 0.14, v, 2.07, ginAccPoints, ginLossRel)
		})
	}
	if msg, failed := tolerance.Fails(func(tb testing.TB) {
		relClose(tb, "replay", want, want, replayBound)
		paramsClose(tb, params, params, 1e-3)
		trainedClose(tb, "gin", 0.14, 0.141, 2.07, 2.071, ginAccPoints, ginLossRel)
	}); failed {
		t.Errorf("equal runs fail: %s", msg)
	}
}

// TestFirstDiffRejectsNaN: two runs whose losses are the same NaN or
// infinity are not bitwise equal for the GPU tests.
func TestFirstDiffRejectsNaN(t *testing.T) {
	want := fallingLosses()
	if i := firstDiff(want, slices.Clone(want)); i != -1 {
		t.Fatalf("equal runs differ at step %d", i)
	}
	for _, v := range notFinite {
		a := slices.Clone(want)
		a[9] = float32(v)
		if i := firstDiff(a, slices.Clone(a)); i != 9 {
			t.Errorf("%v at step 9 of both runs: first difference %d, want 9", v, i)
		}
	}
}

// TestGPUComparisonOnCPU runs cudaMatchesCPULosses with a CPU backend in
// the GPU's place (the runs are then equal), under TF32's bounds, whose
// GIN schedule evaluates the trained models: the harness itself runs in
// CI, not only on a GPU.
func TestGPUComparisonOnCPU(t *testing.T) {
	cudaMatchesCPULosses(t, cpu.New(2), cuda.Options{TF32: true})
}
