package train

import (
	"fmt"
	"time"
)

// BenchResult is what Bench measured.
type BenchResult struct {
	Steps        int         `json:"steps"`          // steps measured (per pass)
	EpochSteps   int         `json:"epoch_steps"`    // steps in one epoch
	StepSeconds  float64     `json:"step_s"`         // mean wall time of a step, no stage syncs
	EpochSeconds float64     `json:"epoch_s"`        // StepSeconds × EpochSteps
	SampleS      float64     `json:"sample_s"`       // per-step mean of the stage, with syncs between stages
	GatherS      float64     `json:"gather_s"`       //
	TrainS       float64     `json:"train_s"`        // forward, loss, backward, Adam
	EdgesPerStep float64     `json:"edges_per_step"` // sampled edges, all hops
	EdgesPerS    float64     `json:"sampled_edges_per_s"`
	InputRows    float64     `json:"input_rows_per_step"` // gathered feature rows
	Loss         float64     `json:"loss"`                // mean loss of the measured steps
	IdleS        float64     `json:"idle_s"`              // step time not attributed to a stage (unsynced pass minus the stages; 0 when negative)
	Blocks       []BlockSize `json:"blocks"`              // mean live sizes per block, bottom first
}

// BlockSize is a block's mean live size over the measured steps.
type BlockSize struct {
	Dst, Edges, Src float64
}

// BenchHooks run around the unsynced pass (to reset and read device counters).
type BenchHooks struct {
	Before, After func()
}

// Bench measures steps of the current configuration with the eager
// driver: one pass with a sync after each stage (for the split between
// sampling, gathering and training), then one pass without (for the step
// time). Steps beyond the epoch wrap around to its start.
func (t *Trainer) Bench(steps, warmup int, hooks BenchHooks) (BenchResult, error) {
	perm := shuffleItems(t.head, t.cfg.Seed, 0)
	epochSteps := t.epochSteps()
	r := BenchResult{Steps: steps, EpochSteps: epochSteps}
	batch := func(s int) []int32 {
		s %= epochSteps
		return perm[s*t.cfg.Batch : min(len(perm), (s+1)*t.cfg.Batch)]
	}
	counts := make([]int32, t.plan.SizeCounts().Len())
	loss := make([]float32, 1)
	var stage [3]time.Duration
	timed := func(i int, f func()) error {
		s := time.Now()
		f()
		err := t.sync()
		stage[i] += time.Since(s)
		return err
	}
	for s := 0; s < warmup+steps; s++ {
		if s == warmup {
			stage = [3]time.Duration{}
			r.EdgesPerStep, r.InputRows = 0, 0
			clear(r.Blocks)
		}
		t.plan.SetItems(batch(s), len(batch(s)), 0, s)
		err := timed(0, func() { t.plan.SampleTrain(t.in, t.cfg.Seed) })
		if err == nil {
			err = timed(1, func() { t.plan.Gather(t.in) })
		}
		if err == nil {
			err = timed(2, func() { t.plan.Learn(t.model, t.in, t.cfg.Seed, t.adam) })
		}
		if err != nil {
			return r, fmt.Errorf("bench step %d: %w", s, err)
		}
		t.be.Read(counts, t.plan.SizeCounts(), 0)
		if err := t.sync(); err != nil {
			return r, fmt.Errorf("bench step %d: %w", s, err)
		}
		if err := t.plan.Overflow(counts); err != nil {
			return r, fmt.Errorf("bench step %d: envelope overflow: %w", s, err)
		}
		sizes := t.plan.LiveSizes(counts)
		if r.Blocks == nil {
			r.Blocks = make([]BlockSize, len(sizes))
		}
		for i, b := range sizes {
			r.EdgesPerStep += b.Edges
			r.Blocks[i].Dst += b.Dst
			r.Blocks[i].Edges += b.Edges
			r.Blocks[i].Src += b.Src
		}
		r.InputRows += sizes[0].Src
	}
	n := float64(steps)
	r.SampleS, r.GatherS, r.TrainS = stage[0].Seconds()/n, stage[1].Seconds()/n, stage[2].Seconds()/n
	r.EdgesPerStep /= n
	r.InputRows /= n
	for i := range r.Blocks {
		r.Blocks[i] = BlockSize{r.Blocks[i].Dst / n, r.Blocks[i].Edges / n, r.Blocks[i].Src / n}
	}
	if r.SampleS > 0 {
		r.EdgesPerS = r.EdgesPerStep / r.SampleS
	}
	if hooks.Before != nil {
		hooks.Before()
	}
	start := time.Now()
	var lossSum float64
	for s := 0; s < steps; s++ {
		b := batch(warmup + steps + s)
		t.plan.SetItems(b, len(b), 0, warmup+steps+s)
		t.plan.SampleTrain(t.in, t.cfg.Seed)
		t.plan.Gather(t.in)
		l, _ := t.plan.Learn(t.model, t.in, t.cfg.Seed, t.adam)
		t.be.Read(loss, l, 0)
		lossSum += float64(loss[0])
	}
	if err := t.sync(); err != nil {
		return r, fmt.Errorf("bench: %w", err)
	}
	r.StepSeconds = time.Since(start).Seconds() / n
	if hooks.After != nil {
		hooks.After()
	}
	r.IdleS = max(0, r.StepSeconds-r.SampleS-r.GatherS-r.TrainS)
	r.EpochSeconds = r.StepSeconds * float64(epochSteps)
	r.Loss = lossSum / n
	return r, nil
}
