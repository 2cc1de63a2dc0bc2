package train

import (
	"context"
	"fmt"
	"time"
)

// BenchReplay measures steps of the replay driver: the envelope is sized
// and the step captured, warmup steps are replayed, then steps more are
// replayed without any host sync until the end. Steps stay within the
// first epoch.
func (t *Trainer) BenchReplay(steps, warmup int, opt ReplayOptions, hooks BenchHooks) (BenchResult, *ReplayStats, error) {
	r, err := t.newReplayer(opt)
	if err != nil {
		return BenchResult{}, nil, err
	}
	defer r.free()
	perm := shuffleItems(t.head, t.cfg.Seed, 0)
	epochSteps := t.epochSteps()
	warmup = min(warmup, epochSteps-1)
	steps = min(steps, epochSteps-warmup)
	res := BenchResult{Steps: steps, EpochSteps: epochSteps}
	t.be.Write(r.perm, 0, perm)
	t.be.Fill(r.acc, 0)
	ctx := context.Background()
	for s := 0; s < warmup; {
		n, _, err := r.run(ctx, 0, s, warmup)
		if err != nil {
			return res, nil, err
		}
		s += n
	}
	t.be.Fill(r.acc, 0)
	r.settleMarks()
	r.stats.BusyS, r.stats.WallS, r.stats.Launches = 0, 0, 0
	if hooks.Before != nil {
		hooks.Before()
	}
	start := time.Now()
	for s := warmup; s < warmup+steps; {
		n, _, err := r.run(ctx, 0, s, warmup+steps)
		if err != nil {
			return res, nil, err
		}
		s += n
	}
	wall := time.Since(start).Seconds()
	if hooks.After != nil {
		hooks.After()
	}
	acc := make([]float32, 2)
	t.be.Read(acc, r.acc, 0)
	if err := t.sync(); err != nil {
		return res, nil, fmt.Errorf("bench replay: %w", err)
	}
	r.settleMarks()
	res.StepSeconds = wall / float64(steps)
	res.EpochSeconds = res.StepSeconds * float64(epochSteps)
	res.Loss = float64(acc[0]) / float64(steps)
	st := r.stats
	return res, &st, nil
}
