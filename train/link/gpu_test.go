package link

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// TestGPUReplayMatchesEagerAndCPU: on a GPU (deterministic, 3xTF32
// products, every product over the whole capacity as in a capture, so
// that eager and replay multiply the same shapes: cuda.Options), the
// captured link step launched for every batch gives the eager run's
// losses and parameters bit for bit, and the eager run's losses are the
// CPU's within float32 rounding. Skipped without a GPU.
func TestGPUReplayMatchesEagerAndCPU(t *testing.T) {
	cfg := ringConfig()
	cfg.Hidden, cfg.Embed, cfg.DecoderWidth = 16, 8, 8 // widths the 3xTF32 kernels take
	for _, dec := range []string{DecoderDot, DecoderMLP} {
		cfg.Decoder = dec
		opt := cuda.Options{Deterministic: true, TF32x3: true, CapacityGemm: true}
		eager, pe := trainLink(t, traintest.GPUWith(t, opt), ringData(t, 400), cfg, false)
		replayed, pr := trainLink(t, traintest.GPUWith(t, opt), ringData(t, 400), cfg, true)
		ref, _ := trainLink(t, cpu.New(2), ringData(t, 400), cfg, false)
		for e := range eager.Epochs {
			a, b, c := eager.Epochs[e].Loss, replayed.Epochs[e].Loss, ref.Epochs[e].Loss
			t.Logf("%s epoch %d: loss GPU eager %.9g, replay %.9g, CPU %.9g", dec, e+1, a, b, c)
			if math.Float64bits(a) != math.Float64bits(b) {
				t.Errorf("%s epoch %d: replayed loss %v, eager %v", dec, e+1, b, a)
			}
			if math.Abs(a-c) > 1e-3*math.Abs(c) {
				t.Errorf("%s epoch %d: GPU loss %v, CPU %v", dec, e+1, a, c)
			}
		}
		for i := range pe {
			if !slices.Equal(pe[i], pr[i]) {
				t.Errorf("%s: parameter %d differs between eager and replay on the GPU", dec, i)
			}
		}
	}
}

// TestGPUCoraLink: on a GPU, the replayed Cora run of the acceptance test
// (one seed) reaches its test ROC-AUC. Skipped without a GPU or the data.
func TestGPUCoraLink(t *testing.T) {
	be := traintest.GPU(t)
	s, _ := trainLink(t, be, coraLink(t, 1), coraConfig(1), true)
	t.Logf("GPU replay: test ROC-AUC %.4f, AP %.4f (best valid %.4f at epoch %d)", s.Test.AUC, s.Test.AP, s.BestValid.AUC, s.BestEpoch)
	if !(s.Test.AUC >= 0.89) {
		t.Errorf("test ROC-AUC %.4f on the GPU, want at least 0.89 (the CPU's seed 1: 0.91)", s.Test.AUC)
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
	cfg := ringConfig()
	cfg.Exclude = ExcludeNone // each rank excludes its own share otherwise (group.go)
	cfg.Hidden, cfg.Embed, cfg.DecoderWidth = 16, 8, 8
	one, _ := trainLink(t, traintest.GPUWith(t, opt), ds, cfg, true)
	gpus := make([]*cuda.Backend, 2)
	for i := range gpus {
		o := opt
		o.Device = i
		gpus[i] = traintest.GPUWith(t, o)
	}
	comms, err := nccl.NewComms(gpus)
	if err != nil {
		t.Fatal(err)
	}
	trs := make([]*Trainer, 2)
	for i := range trs {
		if trs[i], err = NewShared(gpus[i], ds, cfg, comms[i]); err != nil {
			t.Fatal(err)
		}
		defer trs[i].Close()
	}
	s, err := RunGroup(t.Context(), trs, true)
	if err != nil {
		t.Fatal(err)
	}
	for e := range s.Epochs {
		if a, b := s.Epochs[e].Loss, one.Epochs[e].Loss; math.Abs(a-b) > 1e-4*math.Abs(b) {
			t.Errorf("epoch %d: two GPUs' loss %v, one GPU's %v", e+1, a, b)
		}
	}
	p0, p1 := trs[0].params(), trs[1].params()
	for i := range p0 {
		if !slices.Equal(p0[i], p1[i]) {
			t.Fatalf("tensor %d differs between the GPUs", i)
		}
	}
}

// TestGPUTieredMatchesWhole: on a GPU, the hybrid mode's tiered features
// (40% of the rows cached, the rest read from pinned host memory inside
// the replayed step) train as the whole table on the device does, bit for
// bit, and both tiers are read. Skipped without a GPU.
func TestGPUTieredMatchesWhole(t *testing.T) {
	cfg := ringConfig()
	cfg.Hidden, cfg.Embed, cfg.DecoderWidth = 16, 8, 8
	opt := cuda.Options{Deterministic: true, TF32x3: true, CapacityGemm: true}
	ds := ringData(t, 400)
	whole, pw := trainLink(t, traintest.GPUWith(t, opt), ds, cfg, true)
	tr, store, err := NewTiered(traintest.GPUWith(t, opt), ds, cfg, func(_, _, rows int64) (int64, error) { return rows * 2 / 5, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	s, pt := runTrainer(t, tr, true)
	if host, all, err := store.Stats(); err != nil || !(host > 0 && host < all) {
		t.Errorf("%d of %d rows read from host memory (%v), want some and not all", host, all, err)
	}
	for e := range whole.Epochs {
		if a, b := s.Epochs[e].Loss, whole.Epochs[e].Loss; math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("epoch %d: loss %v tiered, %v whole", e+1, a, b)
		}
	}
	for i := range pw {
		if !slices.Equal(pw[i], pt[i]) {
			t.Fatalf("tensor %d differs between the tiered and the whole table", i)
		}
	}
}
