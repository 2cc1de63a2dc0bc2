package multigpu

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// TestGPUTypedDevices: a typed graph (igbh-sim at 1/2000, R-SAGE) on two
// GPUs joined by NCCL: the replayed run gives bitwise the eager one, both
// ranks hold the same parameters after every step, and its global losses
// follow one GPU's with the same global batch and the two CPU devices'
// within the rounding of another summation order.
func TestGPUTypedDevices(t *testing.T) {
	gpus, comms := openGPUs(t, 2)
	ds, cfg := igbhTiny(t)
	eager, eagerHashes := typedOnGPUs(t, gpus, comms, ds, cfg, false)
	replay, hashes := typedOnGPUs(t, gpus, comms, ds, cfg, true)
	if len(replay) == 0 || len(replay) != len(eager) {
		t.Fatalf("%d replayed steps, %d eager", len(replay), len(eager))
	}
	for s := range eager {
		if replay[s] != eager[s] {
			t.Fatalf("step %d: replayed loss %v, eager %v", s, replay[s], eager[s])
		}
	}
	for _, h := range [][][]uint64{eagerHashes, hashes} {
		for s := range h[0] {
			if h[1][s] != h[0][s] {
				t.Fatalf("after step %d rank 1's parameters differ from rank 0's", s)
			}
		}
	}

	var one []float64
	tr, err := train.New(gpus[0], ds, cfg, train.Options{Mode: train.Replay, OnStep: func(_, _ int, l float32) { one = append(one, float64(l)) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.RunReplay(context.Background(), train.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	cpu, _ := run(t, ds, cfg, 2, false)
	for _, c := range []struct {
		name string
		ref  []float64
		tol  float64
	}{{"one GPU", one, 1e-3}, {"two CPU devices", cpu, 5e-3}} {
		if len(c.ref) != len(replay) {
			t.Fatalf("%d steps on %s, %d on two GPUs", len(c.ref), c.name, len(replay))
		}
		worst := 0.0
		for s := range replay {
			worst = max(worst, math.Abs(replay[s]-c.ref[s])/math.Abs(c.ref[s]))
		}
		t.Logf("two GPUs against %s: largest relative loss difference over %d steps %.2g", c.name, len(replay), worst)
		if worst > c.tol {
			t.Errorf("two GPUs against %s: losses differ by %.2g (relative), more than %g\n%v\n%v", c.name, worst, c.tol, replay, c.ref)
		}
	}
}

// typedOnGPUs trains cfg on the GPUs joined by comms and returns every
// step's global loss (the sum of the ranks' shares) and, per rank, a hash
// of its parameters after every step.
func typedOnGPUs(t *testing.T, gpus []*cuda.Backend, comms []*cuda.Comm, ds *dataset.Dataset, cfg train.Config, replay bool) ([]float64, [][]uint64) {
	t.Helper()
	var mu sync.Mutex
	losses := map[[2]int]float64{}
	hashes := make([][]uint64, len(gpus))
	trainers := make([]*train.Trainer, len(gpus))
	ranks := make([]Rank, len(gpus))
	for i := range ranks {
		ranks[i] = Rank{Backend: gpus[i], Coll: comms[i], Started: func(tr *train.Trainer) { trainers[i] = tr }}
		ranks[i].Options.OnStep = func(epoch, step int, loss float32) {
			mu.Lock()
			losses[[2]int{epoch, step}] += float64(loss)
			mu.Unlock()
			hashes[i] = append(hashes[i], paramHash(t, gpus[i], trainers[i]))
		}
	}
	if err := runDeadline(t, 3*time.Minute, context.Background(), ds, cfg, ranks, replay, train.ReplayOptions{}); err != nil {
		t.Fatalf("replay %v: %v", replay, err)
	}
	steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	out := make([]float64, 0, cfg.Epochs*steps)
	for e := 0; e < cfg.Epochs; e++ {
		for s := 0; s < steps; s++ {
			out = append(out, losses[[2]int{e, s}])
		}
	}
	return out, hashes
}
