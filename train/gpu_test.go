package train

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/tolerance"
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

// cudaMatchesCPULosses trains each model for 5 epochs of tiny on gpu and
// on the CPU and holds every step's loss to lossBound; where the bound
// stops at the early steps (GIN under TF32), the trained models' test
// accuracy and loss are held to the CPU's (trainedClose).
func cudaMatchesCPULosses(t *testing.T, gpu backend.Backend, opt cuda.Options) {
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		cfg := tinyModel(t, model)
		bound := lossBound(model, opt)
		// The trained models are evaluated where the bound stops at the
		// early steps (GIN under TF32).
		trained := math.IsInf(bound.late, 1)
		var acc, loss [2]float64
		evaluate := func(k int) func(*Trainer) {
			if !trained {
				return nil
			}
			return func(tr *Trainer) {
				var err error
				if acc[k], loss[k], err = tr.Evaluate(ds.Test); err != nil {
					t.Fatal(err)
				}
			}
		}
		cpuLoss := stepLossesThen(t, nil, ds, cfg, 5, evaluate(0))
		gpuLoss := stepLossesThen(t, gpu, ds, cfg, 5, evaluate(1))
		lossesFollow(t, model+", GPU against CPU", gpuLoss, cpuLoss, bound)
		if trained {
			trainedClose(t, model+", GPU against CPU", acc[1], acc[0], loss[1], loss[0], ginAccPoints, ginLossRel)
		}
	}
}

func TestCoraGCNAccuracyCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 5 models")
	}
	gpu := openCUDA(t)
	ds := loadCora(t)
	if acc := coraAccuracyOn(t, gpu, ds, coraGCN()); !(acc >= 0.80) {
		t.Fatalf("GCN on Cora, CUDA: mean test accuracy %.4f over 5 seeds, want >= 0.80", acc)
	} else {
		t.Logf("GCN on Cora, CUDA: mean test accuracy %.4f over 5 seeds", acc)
	}
}

// TestCoraGATAccuracyCUDA is TestCoraGATAccuracy on the GPU.
func TestCoraGATAccuracyCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a GAT for 200 epochs")
	}
	coraGATAccuracy(t, openCUDA(t))
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
		// that into occasional flips (replayDrift); the deterministic path is
		// held to bitwise equality in TestReplayBitwiseDeterministicCUDA.
		worst, err := tolerance.Losses(got, want, replayDrift)
		if err != nil {
			t.Fatalf("%s replay vs eager: %v", model, err)
		}
		t.Logf("%s: %d steps, measured relative error %.2g at most; %d captures, %d overflows",
			model, len(want), worst, st.Captures, st.Overflows)
		// GAT: issue 10's bound, 140x its measured 7.1e-8 (H200), as
		// against the CPU (lossBound), over the first 10 steps, where a
		// wrong attention dropout mask would part them at once. Later, an
		// atomic sum's flip, which GAT amplifies about 1.5x a step, may
		// reach 1e-3 by step 100 (H200, 1 of 5 runs at 5b13b87); the
		// deterministic path holds GAT to bitwise equality throughout
		// (TestReplayBitwiseDeterministicCUDA).
		if model == "gat" {
			if early, _ := tolerance.Losses(got[:10], want[:10], replayDrift); !(early <= 1e-5) {
				t.Errorf("gat: replay vs eager, largest relative loss difference over the first 10 steps %.2g > 1e-5 (issue 10's bound)", early)
			}
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
	// The losses: replayBound (measured here within 1e-5, H200, issue 4).
	// The parameters: 1e-3 of (1 + |w|), a tenth of one Adam step at
	// tiny's learning rate (0.01); not measured yet (logged below).
	worst := relClose(t, "replay after overflows vs eager", got, want, replayBound)
	params := paramsClose(t, gotParams, wantParams, 1e-3)
	t.Logf("%d overflows, %d captures; measured relative error %.2g at most in the losses, %.2g in the parameters",
		st.Overflows, st.Captures, worst, params)
}

// TestTargetStopsTheRunCUDA: the replay driver on the GPU, validating
// every 2 steps, stops at the first validation that reaches the target and
// reports the time to it, as on the CPU (TestTargetStopsTheRun).
func TestTargetStopsTheRunCUDA(t *testing.T) {
	gpu := openCUDA(t)
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs, cfg.EvalEverySteps, cfg.TargetAcc = 2, 2, 0.45
	sum, _, _, dir := loopRunOn(t, gpu, ds, cfg, true)
	// The GPU's validations may reach it a step later than the CPU's, at
	// the epoch's end.
	checkTargetStop(t, "cuda", cfg, sum, dir, false)
}

// firstDiff is the first step whose losses differ bitwise (or in number),
// or where either is not finite (two runs of NaN losses are not equal),
// or -1.
func firstDiff(a, b []float32) int {
	for i := range min(len(a), len(b)) {
		if v := float64(a[i]); math.Float32bits(a[i]) != math.Float32bits(b[i]) || math.IsNaN(v) || math.IsInf(v, 0) {
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
// so there it is held to replayBound and the difference is logged. With
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
// twice, replay twice, replay sampling three steps ahead and replay at
// eager's capacities must be bitwise equal, and so must replay at its tight envelope when tight is set.
func replayBitwise(t *testing.T, gpu backend.Backend, tight bool) {
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		cfg := tinyModel(t, model)
		cfg.Epochs = 10
		eager1, _ := eagerRun(t, gpu, ds, cfg)
		eager2, _ := eagerRun(t, gpu, ds, cfg)
		replay1, _, st := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		replay2, _, _ := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		replayAhead, _, _ := replayRun(t, gpu, ds, cfg, ReplayOptions{Lookahead: 3}) // a ring of four captured steps
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
			{"replay three steps ahead vs replay", replayAhead, replay1, true},
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
				worst := relClose(t, model+" "+p.what, p.got, p.ref, replayBound)
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

// TestBF16RowsCUDA is TestBF16Rows on the GPU with the deterministic
// aggregation backward: bfloat16 rows give the bits of their float32
// widening, eagerly and replayed.
func TestBF16RowsCUDA(t *testing.T) {
	openCUDA(t) // skips without a device
	bf16RowsMatch(t, func() backend.Backend { return openCUDAWith(t, cuda.Options{Deterministic: true}) })
}

// TestBF16ActivationsCUDA: GraphSAGE with bfloat16 hidden activations on
// the GPU (float32 products) follows the CPU's run with bfloat16
// activations over 50 tiny steps (bf16Bounds). Both round the same float32
// values, but a last-bit difference before rounding can move a value by
// one bfloat16 ulp (2^-8).
func TestBF16ActivationsCUDA(t *testing.T) {
	gpu := openCUDA(t)
	cfg := tinyModel(t, "sage")
	cfg.Activations = "bfloat16"
	followsCPU(t, gpu, tinyData(t), cfg)
}

// followsCPU trains cfg for 5 epochs on the CPU and on gpu and holds every
// step's loss to bf16Bounds (cfg has a bfloat16 option); it returns the
// largest relative difference.
func followsCPU(t *testing.T, gpu backend.Backend, ds *dataset.Dataset, cfg Config) float64 {
	t.Helper()
	cpuLoss := stepLossesOn(t, nil, ds, cfg, 5)
	gpuLoss := stepLossesOn(t, gpu, ds, cfg, 5)
	return lossesFollow(t, cfg.Model+", bfloat16, GPU against CPU", gpuLoss, cpuLoss, bf16Bounds(cfg))
}
