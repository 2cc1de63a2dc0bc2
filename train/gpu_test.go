package train

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
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
