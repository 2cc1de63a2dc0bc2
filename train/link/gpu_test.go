package link

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// gpuConfig is ringConfig at widths the 3xTF32 kernels take.
func gpuConfig() train.Config {
	cfg := ringConfig()
	cfg.Hidden, cfg.Link.Embed, cfg.Link.DecoderWidth = 16, 8, 8
	return cfg
}

// TestGPUReplayMatchesEagerAndCPU: on a GPU (deterministic, 3xTF32
// products, every product over the whole capacity as in a capture, so
// that eager and replay multiply the same shapes: cuda.Options), the
// replayed link step gives the eager run's losses and parameters bit for
// bit, and the eager run's losses are the CPU's within float32 rounding.
// Skipped without a GPU.
func TestGPUReplayMatchesEagerAndCPU(t *testing.T) {
	cfg := gpuConfig()
	for _, dec := range []string{train.DecoderDot, train.DecoderMLP} {
		cfg.Link.Decoder = dec
		if dec == train.DecoderDot {
			cfg.Link.DecoderWidth = 0
		}
		opt := cuda.Options{Deterministic: true, TF32x3: true, CapacityGemm: true}
		eager := trainLink(t, traintest.GPUWith(t, opt), ringData(t, 400), cfg, train.Eager, train.Options{})
		replayed := trainLink(t, traintest.GPUWith(t, opt), ringData(t, 400), cfg, train.Replay, train.Options{})
		ref := trainLink(t, cpu.New(2), ringData(t, 400), cfg, train.Eager, train.Options{})
		// Step by step the drivers agree bit for bit (the epoch means
		// differ in the last bits: eager adds them on the host in float64,
		// replay on the device in float32).
		if !slices.Equal(eager.steps, replayed.steps) || len(eager.steps) == 0 {
			t.Errorf("%s: step losses differ between eager and replay on the GPU:\n%v\n%v", dec, eager.steps, replayed.steps)
		}
		for e := range eager.epochs {
			a, c := eager.epochs[e].Loss, ref.epochs[e].Loss
			t.Logf("%s epoch %d: loss GPU %.9g, CPU %.9g", dec, e+1, a, c)
			if !(math.Abs(a-c) <= 1e-3*math.Abs(c)) {
				t.Errorf("%s epoch %d: GPU loss %v, CPU %v", dec, e+1, a, c)
			}
		}
		for i := range eager.params {
			if !slices.Equal(eager.params[i], replayed.params[i]) {
				t.Errorf("%s: parameter %d differs between eager and replay on the GPU", dec, i)
			}
		}
	}
}

// TestGPUCoraLink: on a GPU, the replayed Cora run of the acceptance test
// (one seed) reaches its test ROC-AUC. Skipped without a GPU or the data.
func TestGPUCoraLink(t *testing.T) {
	be := traintest.GPU(t)
	s := trainLink(t, be, coraLink(t, 1), coraConfig(1), train.Replay, train.Options{}).sum
	t.Logf("GPU replay: test %s (best epoch %d)", s.Test.Text(nil), s.BestEpoch)
	if !(s.Test[MetricAUC] >= 0.89) {
		t.Errorf("test ROC-AUC %.4f on the GPU, want at least 0.89 (the CPU's seed 1: 0.91)", s.Test[MetricAUC])
	}
}

// TestGPUGroupMatchesOneGPU: two GPUs joined by NCCL, each taking half of
// every step's edges (replayed), train as one GPU does within float32
// rounding, and their weights stay bitwise equal. Skipped without two GPUs
// and NCCL.
func TestGPUGroupMatchesOneGPU(t *testing.T) {
	opt := cuda.Options{Deterministic: true, TF32x3: true}
	if n, err := cuda.DeviceCount(opt); err != nil || n < 2 {
		t.Skipf("two GPUs needed (%d, %v)", n, err)
	}
	nccl, err := cuda.LoadNCCL("")
	if err != nil {
		t.Skip("NCCL not available: " + err.Error())
	}
	ds := ringData(t, 400)
	cfg := gpuConfig()
	cfg.Link.Exclude = train.ExcludeNone // each rank excludes its own share otherwise
	one := trainLink(t, traintest.GPUWith(t, opt), ds, cfg, train.Replay, train.Options{})
	gpus := make([]*cuda.Backend, 2)
	bes := make([]backend.Backend, 2)
	for i := range gpus {
		o := opt
		o.Device = i
		gpus[i] = traintest.GPUWith(t, o)
		bes[i] = gpus[i]
	}
	comms, err := nccl.NewComms(gpus)
	if err != nil {
		t.Fatal(err)
	}
	colls := make([]backend.Collective, 2)
	for i, c := range comms {
		colls[i] = c
		t.Cleanup(func() { c.Close() })
	}
	g := runRanks(t, ds, cfg, bes, colls, train.Replay, train.Options{})
	for e := range g.epochs {
		if a, b := g.epochs[e].Loss, one.epochs[e].Loss; math.Abs(a-b) > 1e-4*math.Abs(b) {
			t.Errorf("epoch %d: two GPUs' loss %v, one GPU's %v", e+1, a, b)
		}
	}
	for i := range g.params[0] {
		if !slices.Equal(g.params[0][i], g.params[1][i]) {
			t.Fatalf("tensor %d differs between the GPUs", i)
		}
	}
}

// TestGPUTieredMatchesWhole: on a GPU, the hybrid mode's tiered features
// (40% of the rows cached, the rest read from pinned host memory inside
// the replayed step) train as the whole table on the device does, bit for
// bit, and both tiers are read. Skipped without a GPU.
func TestGPUTieredMatchesWhole(t *testing.T) {
	cfg := gpuConfig()
	opt := cuda.Options{Deterministic: true, TF32x3: true, CapacityGemm: true}
	ds := ringData(t, 400)
	whole := trainLink(t, traintest.GPUWith(t, opt), ds, cfg, train.Replay, train.Options{})
	r, host, all := tiered(t, traintest.GPUWith(t, opt), ds, cfg, train.Replay)
	if !(host > 0 && host < all) {
		t.Errorf("%d of %d rows read from host memory, want some and not all", host, all)
	}
	for e := range whole.epochs {
		if a, b := r.epochs[e].Loss, whole.epochs[e].Loss; math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("epoch %d: loss %v tiered, %v whole", e+1, a, b)
		}
	}
	for i := range whole.params {
		if !slices.Equal(whole.params[i], r.params[i]) {
			t.Fatalf("tensor %d differs between the tiered and the whole table", i)
		}
	}
}

// TestGPUDeviceEval: on a GPU, the evaluation through the link ops gives
// the metrics the host counts from the GPU's own scores, bit for bit
// (PairRanks, LevelCounts and the levels), and those scores are the host
// twin's float64 scores within float32 rounding, for both decoders,
// against stored and drawn negatives. Skipped without a GPU.
func TestGPUDeviceEval(t *testing.T) {
	ds := ringData(t, 400)
	opt := cuda.Options{Deterministic: true, TF32x3: true}
	for _, dec := range []string{train.DecoderDot, train.DecoderMLP} {
		for _, k := range []int{0, 40} {
			cfg := gpuConfig()
			cfg.Epochs, cfg.Link.Decoder, cfg.Link.EvalNegatives = 2, dec, k
			if dec == train.DecoderDot {
				cfg.Link.DecoderWidth = 0
			}
			checkDeviceEval(t, newEvalCase(t, traintest.GPUWith(t, opt), ds, cfg), false)
		}
	}
}

// TestGPUNegativesReplayMatchesEager: on a GPU, shared negatives (drawn
// by degree, with the set of drawn vertices in shared memory) and in-batch
// negatives replay the eager run bit for bit, and the eager run's losses
// are the CPU's within float32 rounding. Skipped without a GPU.
func TestGPUNegativesReplayMatchesEager(t *testing.T) {
	ds := ringData(t, 400)
	opt := cuda.Options{Deterministic: true, TF32x3: true, CapacityGemm: true}
	for _, cfg := range []train.Config{sharedConfig(100, train.DistDegree), inBatchConfig(40)} {
		cfg.Hidden, cfg.Link.Embed, cfg.Link.DecoderWidth = 16, 8, 8
		eager := trainLink(t, traintest.GPUWith(t, opt), ds, cfg, train.Eager, train.Options{})
		replayed := trainLink(t, traintest.GPUWith(t, opt), ds, cfg, train.Replay, train.Options{})
		ref := trainLink(t, cpu.New(2), ds, cfg, train.Eager, train.Options{})
		if !slices.Equal(eager.steps, replayed.steps) || len(eager.steps) == 0 {
			t.Errorf("%s: step losses differ between eager and replay on the GPU", cfg.Link.NegativesText())
		}
		for e := range eager.epochs {
			if a, c := eager.epochs[e].Loss, ref.epochs[e].Loss; !(math.Abs(a-c) <= 1e-3*math.Abs(c)) {
				t.Errorf("%s epoch %d: GPU loss %v, CPU %v", cfg.Link.NegativesText(), e+1, a, c)
			}
		}
	}
}
