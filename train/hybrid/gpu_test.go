package hybrid

import (
	"context"
	"math"
	"testing"

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
