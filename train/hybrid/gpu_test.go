package hybrid

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

func losses(t *testing.T, run func(train.Options) error) []float32 {
	var l []float32
	if err := run(train.Options{OnStep: func(_, _ int, v float32) { l = append(l, v) }}); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHybridCUDA: on a GPU, hybrid with a partial cache (host rows read
// over PCIe in place) equals the all-resident replay run bitwise (the
// deterministic path), and the CPU's hybrid run within 1e-5 relative.
func TestHybridCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	hopt := Options{CacheRows: 2000}
	replay := losses(t, func(o train.Options) error {
		o.Replay = true
		tr, err := train.New(gpu, ds, cfg, o)
		if err != nil {
			return err
		}
		defer tr.Close()
		_, _, err = tr.RunReplay(context.Background(), train.ReplayOptions{})
		return err
	})
	var st *Stats
	hyb := losses(t, func(o train.Options) error {
		var err error
		_, st, err = Run(context.Background(), gpu, ds, cfg, o, hopt)
		return err
	})
	onCPU := losses(t, func(o train.Options) error {
		_, _, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, o, hopt)
		return err
	})
	if len(hyb) != len(replay) || len(hyb) != len(onCPU) {
		t.Fatalf("steps: hybrid %d, replay %d, CPU %d", len(hyb), len(replay), len(onCPU))
	}
	worst := 0.0
	for i := range hyb {
		if hyb[i] != replay[i] {
			t.Fatalf("step %d: hybrid %v, replay %v", i, hyb[i], replay[i])
		}
		worst = max(worst, math.Abs(float64(hyb[i]-onCPU[i]))/math.Abs(float64(onCPU[i])))
	}
	t.Logf("hybrid on the GPU against the CPU: largest relative loss difference %.2g; hit rate %.3f", worst, st.HitRate)
	if worst > 1e-5 {
		t.Fatalf("hybrid on the GPU differs from the CPU by %.2g", worst)
	}
	if st.HitRate <= 0 || st.HitRate >= 1 {
		t.Fatalf("hit rate %.3f with 2000 of 16384 rows cached", st.HitRate)
	}
}

// TestHotCUDA: on a GPU, hybrid with CPU-computed hot vertices (the host
// table read in place, the bottom hop masked on the device; as inputs
// added before layer 0's product, or as outputs whose gradient is
// collected on the device) follows the CPU's run of the same
// schedule within 1e-5 relative loss when the rows are fresh (one step per
// super-batch, staleness 0); with stale rows the pipelined schedule equals
// the sequential one bitwise on the GPU too. (Stale rows make the training
// dynamics amplify the last-bit differences between GPU and CPU: measured
// 3e-6 after 8 steps, 2e-4 after 20, docs/perf.md.)
func TestHotCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	run := func(be backend.Backend, h HotOptions) ([]float32, *Stats) {
		var st *Stats
		l := losses(t, func(o train.Options) error {
			var err error
			_, st, err = Run(context.Background(), be, ds, cfg, o, Options{CacheRows: 2000, Hot: h})
			return err
		})
		return l, st
	}
	for _, outputs := range []bool{false, true} {
		fresh := HotOptions{Ratio: 0.1, Staleness: 0, SuperBatch: 1, Outputs: outputs}
		onGPU, st := run(gpu, fresh)
		onCPU, _ := run(record.New(cpu.New(2)), fresh)
		if len(onGPU) != len(onCPU) {
			t.Fatalf("steps: GPU %d, CPU %d", len(onGPU), len(onCPU))
		}
		worst := 0.0
		for i := range onGPU {
			worst = max(worst, math.Abs(float64(onGPU[i]-onCPU[i]))/math.Abs(float64(onCPU[i])))
		}
		t.Logf("outputs %t: fresh hot rows on the GPU against the CPU: largest relative loss difference %.2g over %d steps; %d hot vertices, %d super-batches, %d gradients", outputs, worst, len(onGPU), st.Hot.Vertices, st.Hot.SuperBatches, st.Hot.Gradients)
		if worst > 1e-5 {
			t.Fatalf("outputs %t: hot vertices on the GPU differ from the CPU by %.2g", outputs, worst)
		}
		stale := HotOptions{Ratio: 0.1, Staleness: 1, SuperBatch: 4, Sequential: true, Outputs: outputs}
		ref, _ := run(gpu, stale)
		stale.Sequential = false
		if got, _ := run(gpu, stale); !slices.Equal(got, ref) {
			t.Fatalf("outputs %t: on the GPU the pipelined schedule differs from the sequential one", outputs)
		}
	}
}

// TestChooseHotRatioCUDA: on a GPU the trials of --hot-ratio auto leave
// no device memory behind (each trial's trainer frees its graph, tables,
// plan and model), so every trial and the run after them plan against
// the same free memory.
func TestChooseHotRatioCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	cfg.Batch = 32
	m := backend.MemoryOf(gpu)
	before := m.InUseBytes()
	opt := Options{CacheRows: 3000, Hot: HotOptions{Staleness: 1, SuperBatch: 2}}
	trials, err := ChooseHotRatio(context.Background(), gpu, ds, cfg, &opt, []float64{0, 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if after := m.InUseBytes(); after != before {
		t.Errorf("device memory in use: %d bytes before the trials, %d after", before, after)
	}
	t.Logf("trials %+v: chose %g", trials, opt.Hot.Ratio)
}
