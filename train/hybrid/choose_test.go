package hybrid

import (
	"context"
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// TestChooseHotRatio: the measurement trains a few super-batches at each
// candidate ratio, 0 included, times the same number of steps for each
// (the super-batches after the first), and picks the fastest of those it
// timed; with an epoch too short to time, it says so and picks 0. The
// rankings were made once, kept for every trial and the run after.
func TestChooseHotRatio(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Batch = 32
	be := record.New(cpu.New(2))
	opt := Options{CacheRows: 3000, Hot: HotOptions{Staleness: 1, SuperBatch: 2, NewCPU: func() (backend.Backend, error) { return cpu.New(2), nil }}}
	cands := []float64{0, 0.05, 0.1}
	trials, err := ChooseHotRatio(context.Background(), be, ds, cfg, &opt, cands)
	if err != nil {
		t.Fatal(err)
	}
	ratio := opt.Hot.Ratio
	if opt.ranks == nil || opt.ranks.order == nil || opt.ranks.dests == nil {
		t.Fatalf("the trials' rankings were not kept for the run: %+v", opt.ranks)
	}
	if len(trials) == 0 || trials[0].Ratio != 0 {
		t.Fatalf("trials %+v do not start at ratio 0", trials)
	}
	best := math.Inf(1)
	for i, tr := range trials {
		if tr.Ratio != cands[i] {
			t.Errorf("trial %d at ratio %g, want %g", i, tr.Ratio, cands[i])
		}
		if tr.Steps != trialSegments*opt.Hot.SuperBatch || !(tr.StepSeconds > 0) {
			t.Errorf("ratio %g: %d steps timed at %g s per step, want %d steps", tr.Ratio, tr.Steps, tr.StepSeconds, trialSegments*opt.Hot.SuperBatch)
		}
		best = min(best, tr.StepSeconds)
	}
	var chosen *HotTrial
	for i := range trials {
		if trials[i].Ratio == ratio {
			chosen = &trials[i]
		}
	}
	if chosen == nil || chosen.StepSeconds != best {
		t.Errorf("chose %g, not the fastest of %+v", ratio, trials)
	}
	t.Logf("trials %+v: chose %g", trials, ratio)

	opt.Hot.SuperBatch = 1 << 20 // one super-batch per epoch: nothing to time
	trials, err = ChooseHotRatio(context.Background(), be, ds, cfg, &opt, cands)
	if err != nil {
		t.Fatal(err)
	}
	ratio = opt.Hot.Ratio
	if ratio != 0 || len(trials) != len(cands) || !math.IsNaN(trials[1].StepSeconds) {
		t.Errorf("an untimed epoch: chose %g from %+v, want 0 and every trial untimed", ratio, trials)
	}
}

// TestChooseHotRatioTimesTrainingAlone: a run that validates after every
// step still times whole super-batches of training in its trials (the
// validations would end a launch run, and so mark a trial, at every step).
func TestChooseHotRatioTimesTrainingAlone(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Batch, cfg.EvalEverySteps = 32, 1
	opt := Options{CacheRows: 3000, Hot: HotOptions{Staleness: 1, SuperBatch: 2, NewCPU: func() (backend.Backend, error) { return cpu.New(2), nil }}}
	trials, err := ChooseHotRatio(context.Background(), record.New(cpu.New(2)), ds, cfg, &opt, []float64{0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 1 || trials[0].Steps != trialSegments*opt.Hot.SuperBatch {
		t.Fatalf("trials %+v, want %d steps timed", trials, trialSegments*opt.Hot.SuperBatch)
	}
}
