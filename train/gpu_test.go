package train

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/sample"
)

var kernelCache = struct {
	once sync.Once
	dir  string
}{}

// openCUDA returns a CUDA backend closed at the end of the test, or skips
// the test when there is no usable device.
func openCUDA(t *testing.T) backend.Backend { return openCUDAWith(t, cuda.Options{}) }

// openCUDAWith is openCUDA with options (the kernel cache is the tests').
func openCUDAWith(t *testing.T, opt cuda.Options) backend.Backend {
	t.Helper()
	kernelCache.once.Do(func() { kernelCache.dir, _ = os.MkdirTemp("", "fanout-train-kernels-") })
	opt.CacheDir = filepath.Join(kernelCache.dir, "k")
	be, err := cuda.New(opt)
	if err != nil {
		if _, aerr := cuda.Available(opt); aerr != nil {
			t.Skip("no CUDA device: " + aerr.Error())
		}
		t.Fatalf("cuda.New: %v", err) // a device, but its backend failed
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// TestCUDAMatchesCPULosses: 50 tiny steps give the CPU's losses, with
// cuBLAS's float32 products, with the 3xTF32 kernels (which take every
// product of tiny's model: all widths are multiples of 4) and with TF32
// products on cuBLAS (the command line's default on a GPU).
func TestCUDAMatchesCPULosses(t *testing.T) {
	for _, opt := range []cuda.Options{{}, {TF32x3: true}, {TF32: true}} {
		name := fmt.Sprintf("tf32x3=%t", opt.TF32x3)
		if opt.TF32 {
			name = "tf32"
		}
		t.Run(name, func(t *testing.T) { cudaMatchesCPULosses(t, openCUDAWith(t, opt), opt) })
	}
}

// lossBound is how far (relative) a GPU step's loss may be from the CPU's
// at step i. GAT's training on tiny amplifies a one-ulp difference about
// 1.5 times a step (measured on an H200: with the 3xTF32 products the
// losses agree to 1e-7 for 15 steps, then drift to 2.5e-6 at step 20 and
// 1e-3 by step 40, while the float32 products give the CPU's losses
// exactly), so with the 3xTF32 kernels GAT is held to 1e-5 for its first
// 20 steps and to 1e-2 after; float32 products are held to 1e-5
// throughout, the other models to 1e-3. TF32 products (a 10-bit mantissa:
// about 2.6e-4 relative error in a product, docs/perf.md) start within
// 1e-3 of the CPU (measured on an H200: at most 1.8e-4 at the first step)
// and are held to 2e-2 after (measured worst over 50 steps: SAGE 3.5e-3,
// GCN 3.8e-4, GAT 7.8e-3), except GIN, whose sums without normalisation
// give tiny losses of a few hundred and a chaotic training: TF32 moved
// its losses by up to 22% (step 5; 1.1e-3 at step 49),
// where float32 and 3xTF32 stay within 4e-6; it is held to 0.5.
func lossBound(model string, opt cuda.Options, i int) float64 {
	switch {
	case opt.TF32 && i == 0:
		return 1e-3
	case opt.TF32 && model == "gin":
		return 0.5
	case opt.TF32:
		return 2e-2
	case model == "gat" && opt.TF32x3 && i >= 20:
		return 1e-2
	case model == "gat":
		return 1e-5 // issue 10's bound: its attention dropout masks must be the CPU's exactly
	}
	return 1e-3
}

// cudaMatchesCPULosses trains each model for 5 epochs of tiny on gpu and
// on the CPU and compares every step's loss (lossBound).
func cudaMatchesCPULosses(t *testing.T, gpu backend.Backend, opt cuda.Options) {
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		cfg := tinyModel(t, model)
		cpuLoss := stepLossesOn(t, nil, ds, cfg, 5)
		gpuLoss := stepLossesOn(t, gpu, ds, cfg, 5)
		if len(cpuLoss) < 50 || len(gpuLoss) != len(cpuLoss) {
			t.Fatalf("%s: %d CPU steps, %d GPU steps; want the same, at least 50", model, len(cpuLoss), len(gpuLoss))
		}
		worst := 0.0
		var trace []string
		for i := range cpuLoss {
			rel := math.Abs(float64(gpuLoss[i]-cpuLoss[i])) / math.Abs(float64(cpuLoss[i]))
			worst = max(worst, rel)
			if i%5 == 0 || i == len(cpuLoss)-1 {
				trace = append(trace, fmt.Sprintf("%d:%.1e", i, rel))
			}
			if bound := lossBound(model, opt, i); rel > bound {
				t.Fatalf("%s step %d: GPU loss %v, CPU %v (relative %.2g > %g)", model, i, gpuLoss[i], cpuLoss[i], rel, bound)
			}
		}
		t.Logf("%s: %d steps, largest relative loss difference %.2g (by step: %s)", model, len(cpuLoss), worst, strings.Join(trace, " "))
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

// TestCoraGATAccuracyCUDA is TestCoraGATAccuracy on the GPU (seed 1, or
// FANOUT_CORA_GAT_SEEDS seeds).
func TestCoraGATAccuracyCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a GAT for 200 epochs")
	}
	coraGATAccuracy(t, openCUDA(t))
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
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		cfg := tinyModel(t, model)
		cfg.Epochs = 10
		want, _ := eagerRun(t, gpu, ds, cfg)
		got, _, st := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		if len(want) < 100 {
			t.Fatalf("only %d steps", len(want))
		}
		// The default aggregation backward adds with float atomics, so two
		// eager runs already differ in the last bits, and training amplifies
		// that into occasional flips: measured on an H200, GCN's loss at step
		// 18 differed by 1.5e-5 in 2 of 12 runs, SAGE's at step 25 or 91 by
		// up to 2.6e-5. Replay is held to 1e-3 here (a wrong step shows up far
		// above that); the deterministic path is held to bitwise equality in
		// TestReplayBitwiseDeterministicCUDA.
		worst := relClose(t, model+" replay vs eager", got, want, 1e-3)
		t.Logf("%s: %d steps, largest relative difference %.2g; %d captures, %d overflows",
			model, len(want), worst, st.Captures, st.Overflows)
		if model == "gat" && worst > 1e-5 {
			t.Errorf("gat: replay vs eager, largest relative loss difference %.2g > 1e-5 (issue 10's bound)", worst)
		}
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
	// 1e-3: see TestReplayMatchesEagerCUDA on the atomics' last-bit flips.
	relClose(t, "replay after overflows vs eager", got, want, 1e-3)
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

// firstDiff is the first step whose losses differ bitwise (or in number), or
// -1.
func firstDiff(a, b []float32) int {
	for i := range min(len(a), len(b)) {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestReplayBitwiseDeterministicCUDA: with the deterministic aggregation
// backward and capacity GEMMs, 100 steps of tiny (SAGE and GCN) give
// bitwise the same losses run twice, eagerly and replayed, and replay at the
// eager run's capacities (the conservative envelope) equals eager bitwise.
// At its own tight envelope, replay multiplies matrices of other shapes, and
// cuBLAS may add up a product in another order for another shape (measured
// on an H200: SAGE's losses part by one ulp at step 25, GCN's stay equal),
// so there it is held to 1e-3 relative and the difference is logged. With
// the 3xTF32 kernels it must be bitwise equal there too.
func TestReplayBitwiseDeterministicCUDA(t *testing.T) {
	t.Run("cublas", func(t *testing.T) {
		replayBitwise(t, openCUDAWith(t, cuda.Options{Deterministic: true, CapacityGemm: true}), false)
	})
	// The 3xTF32 kernels sum every product in an order that does not depend
	// on the capacity, and take all of tiny's products: replay at its tight
	// envelope must then equal eager bitwise too.
	t.Run("tf32x3", func(t *testing.T) {
		replayBitwise(t, openCUDAWith(t, cuda.Options{Deterministic: true, TF32x3: true}), true)
	})
}

// replayBitwise compares eager and replayed runs of tiny on gpu: eager
// twice, replay twice and replay at eager's capacities must be bitwise
// equal, and so must replay at its tight envelope when tight is set.
func replayBitwise(t *testing.T, gpu backend.Backend, tight bool) {
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		cfg := tinyModel(t, model)
		cfg.Epochs = 10
		eager1, _ := eagerRun(t, gpu, ds, cfg)
		eager2, _ := eagerRun(t, gpu, ds, cfg)
		replay1, _, st := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		replay2, _, _ := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		var cons []nn.Caps
		for _, c := range sample.Envelope(ds.Graph, cfg.Batch, cfg.Fanouts) {
			cons = append(cons, nn.Caps{Dst: c.Dst, Edges: c.Edges, Src: c.Src})
		}
		replayCons, _, _ := replayRun(t, gpu, ds, cfg, ReplayOptions{Caps: cons})
		if len(eager1) < 100 {
			t.Fatalf("%s: only %d steps", model, len(eager1))
		}
		pairs := []struct {
			what     string
			got, ref []float32
			must     bool
		}{
			{"eager vs eager", eager2, eager1, true},
			{"replay vs replay", replay2, replay1, true},
			{"replay at eager's capacities vs eager", replayCons, eager1, true},
			{"replay (tight envelope) vs eager", replay1, eager1, tight},
		}
		t.Logf("%s: %d steps, %d captures, envelope %+v", model, len(eager1), st.Captures, st.Envelope)
		for _, p := range pairs {
			i := firstDiff(p.got, p.ref)
			switch {
			case i < 0:
				t.Logf("%s: %s: bitwise equal", model, p.what)
			case p.must:
				t.Errorf("%s: %s: first difference at step %d: %v vs %v", model, p.what, i, lossAt(p.got, i), lossAt(p.ref, i))
			default:
				worst := relClose(t, model+" "+p.what, p.got, p.ref, 1e-3)
				t.Logf("%s: %s: first difference at step %d: %v vs %v; largest relative difference %.2g",
					model, p.what, i, lossAt(p.got, i), lossAt(p.ref, i), worst)
			}
		}
	}
}

// lossAt is s[i], or NaN past its end.
func lossAt(s []float32, i int) float32 {
	if i < len(s) {
		return s[i]
	}
	return float32(math.NaN())
}

// TestTableInputCUDA is TestTableInput on the GPU, eagerly (the replayed
// step's capacities differ, and cuBLAS may sum their products in another
// order), with the deterministic aggregation backward: reading the table
// in place gives the bits of the gathered rows.
func TestTableInputCUDA(t *testing.T) {
	openCUDA(t) // skips without a device
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		tableInputMatchesGather(t, func() backend.Backend { return openCUDAWith(t, cuda.Options{Deterministic: true}) }, "sage", dt, false)
	}
}

// TestBF16ActivationsCUDA: GraphSAGE with bfloat16 hidden activations on
// the GPU (float32 products) follows the CPU's run with bfloat16
// activations over 50 tiny steps. Both round the same float32 values, but a
// last-bit difference before rounding can move a value by one bfloat16 ulp
// (2^-8), so the bound is TF32's: 1e-3 at the first step, 2e-2 after.
func TestBF16ActivationsCUDA(t *testing.T) {
	gpu := openCUDA(t)
	cfg := tinyModel(t, "sage")
	cfg.Activations = "bfloat16"
	t.Logf("sage, bfloat16 activations: largest relative loss difference %.2g", followsCPU(t, gpu, tinyData(t), cfg))
}

// followsCPU trains cfg for 5 epochs on the CPU and on gpu and holds every
// step's loss to TF32's bound (lossBound); it returns the largest relative
// difference.
func followsCPU(t *testing.T, gpu backend.Backend, ds *dataset.Dataset, cfg Config) float64 {
	t.Helper()
	cpuLoss := stepLossesOn(t, nil, ds, cfg, 5)
	gpuLoss := stepLossesOn(t, gpu, ds, cfg, 5)
	if len(cpuLoss) < 50 || len(gpuLoss) != len(cpuLoss) {
		t.Fatalf("%d CPU steps, %d GPU steps; want the same, at least 50", len(cpuLoss), len(gpuLoss))
	}
	worst := 0.0
	for i := range cpuLoss {
		rel := math.Abs(float64(gpuLoss[i]-cpuLoss[i])) / math.Abs(float64(cpuLoss[i]))
		worst = max(worst, rel)
		if bound := lossBound(cfg.Model, cuda.Options{TF32: true}, i); rel > bound {
			t.Fatalf("step %d: GPU loss %v, CPU %v (relative %.2g > %g)", i, gpuLoss[i], cpuLoss[i], rel, bound)
		}
	}
	return worst
}
