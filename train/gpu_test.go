package train

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/nn"
)

var kernelCache = struct {
	once sync.Once
	dir  string
}{}

// openCUDA returns a CUDA backend closed at the end of the test, or skips
// the test when there is no usable device.
func openCUDA(t *testing.T) backend.Backend {
	t.Helper()
	kernelCache.once.Do(func() { kernelCache.dir, _ = os.MkdirTemp("", "fanout-train-kernels-") })
	be, err := cuda.New(cuda.Options{CacheDir: filepath.Join(kernelCache.dir, "k")})
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func TestCUDAMatchesCPULosses(t *testing.T) {
	gpu := openCUDA(t)
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn"} {
		cfg := tinyConfig(t)
		cfg.Model = model
		cpuLoss := stepLossesOn(t, nil, ds, cfg, 5)
		gpuLoss := stepLossesOn(t, gpu, ds, cfg, 5)
		if len(cpuLoss) < 50 || len(gpuLoss) != len(cpuLoss) {
			t.Fatalf("%s: %d CPU steps, %d GPU steps; want the same, at least 50", model, len(cpuLoss), len(gpuLoss))
		}
		worst := 0.0
		for i := range cpuLoss {
			rel := math.Abs(float64(gpuLoss[i]-cpuLoss[i])) / math.Abs(float64(cpuLoss[i]))
			worst = max(worst, rel)
			if rel > 1e-3 {
				t.Fatalf("%s step %d: GPU loss %v, CPU %v (relative %.2g > 1e-3)", model, i, gpuLoss[i], cpuLoss[i], rel)
			}
		}
		t.Logf("%s: %d steps, largest relative loss difference %.2g", model, len(cpuLoss), worst)
	}
}

func TestCoraGCNAccuracyCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 5 models")
	}
	gpu := openCUDA(t)
	ds := loadCora(t)
	if acc := coraAccuracyOn(t, gpu, ds, coraGCN()); acc < 0.80 {
		t.Fatalf("GCN on Cora, CUDA: mean test accuracy %.4f over 5 seeds, want >= 0.80", acc)
	} else {
		t.Logf("GCN on Cora, CUDA: mean test accuracy %.4f over 5 seeds", acc)
	}
}

// relClose fails unless every loss of got is within tol (relative) of want.
func relClose(t *testing.T, what string, got, want []float32, tol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d steps, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		rel := math.Abs(float64(got[i]-want[i])) / math.Abs(float64(want[i]))
		worst = max(worst, rel)
		if rel > tol || math.IsNaN(rel) {
			t.Fatalf("%s step %d: %v, want %v (relative %.2g > %g)", what, i, got[i], want[i], rel, tol)
		}
	}
	return worst
}

func TestReplayMatchesEagerCUDA(t *testing.T) {
	gpu := openCUDA(t)
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn"} {
		cfg := tinyConfig(t)
		cfg.Model, cfg.Epochs = model, 10
		want, _ := eagerRun(t, gpu, ds, cfg)
		got, _, st := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		if len(want) < 100 {
			t.Fatalf("only %d steps", len(want))
		}
		// The default aggregation backward adds with float atomics, so two
		// eager runs already differ in the last bits, and training amplifies
		// that: measured on an H200, losses at step 91 of the same eager run
		// come out 1.1627429 or 1.162729 (1.2e-5 apart). Hold the first 50
		// steps to 1e-5 and all 100 to 1e-4; the deterministic path is held to
		// bitwise equality in TestReplayBitwiseDeterministicCUDA.
		early := relClose(t, model+" replay vs eager, first 50 steps", got[:50], want[:50], 1e-5)
		worst := relClose(t, model+" replay vs eager", got, want, 1e-4)
		t.Logf("%s: %d steps, largest relative difference %.2g (first 50: %.2g); %d captures, %d overflows",
			model, len(want), worst, early, st.Captures, st.Overflows)
	}
}

func TestReplayOverflowCUDA(t *testing.T) {
	gpu := openCUDA(t)
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 2
	want, wantParams := eagerRun(t, gpu, ds, cfg)
	small := []nn.Caps{{Dst: 300, Edges: 300, Src: 400}, {Dst: cfg.Batch, Edges: 200, Src: 300}}
	got, gotParams, st := replayRun(t, gpu, ds, cfg, ReplayOptions{Caps: small, Margin: 1.01})
	if st.Overflows == 0 {
		t.Fatalf("no overflow forced: %+v", st)
	}
	relClose(t, "replay after overflows vs eager", got, want, 1e-5)
	for i := range wantParams {
		for j := range wantParams[i] {
			d := math.Abs(float64(gotParams[i][j] - wantParams[i][j]))
			if d > 1e-3*(1+math.Abs(float64(wantParams[i][j]))) {
				t.Fatalf("parameter array %d element %d: %v, eager %v", i, j, gotParams[i][j], wantParams[i][j])
			}
		}
	}
	t.Logf("%d overflows, %d captures", st.Overflows, st.Captures)
}
