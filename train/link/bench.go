package link

import (
	"fmt"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// Bench times steps of epoch 0 after warmup steps: eager (each step
// issued and its loss read, as Run does) or replayed (the step captured
// once and launched for each, as RunReplay does, the host waiting at the
// end only). It returns the time of the measured steps; measure calls
// mark the start and the end (a backend's counters, say). The epoch must
// hold warmup + steps steps. Training starts afresh at epoch 0 afterwards
// only in a new trainer.
func (t *Trainer) Bench(replay bool, warmup, steps int, measure func(start bool)) (time.Duration, error) {
	if have := t.steps(); warmup+steps > have {
		return 0, fmt.Errorf("link bench: %d warm-up and %d measured steps, but an epoch of %d edges in batches of %d has %d",
			warmup, steps, dataset.Pairs(t.ds.Link.Train), t.cfg.Batch, have)
	}
	edges := make([]int64, dataset.Pairs(t.ds.Link.Train))
	for i := range edges {
		edges[i] = int64(i)
	}
	t.be.Write(t.perm, 0, t.rankOrder(train.Shuffle(edges, t.cfg.Seed, 0)))
	t.be.Write(t.plan.Clock, 0, []int32{0, 0})
	step := t.issueStep
	if replay {
		capt, ok := t.be.(backend.Capturer)
		if !ok {
			return 0, fmt.Errorf("link bench: replay needs a backend that captures (backend.Capturer); %s does not", t.be.Name())
		}
		if err := capt.BeginCapture(); err != nil {
			return 0, err
		}
		t.issueStep()
		rep, err := capt.EndCapture()
		if err != nil {
			return 0, err
		}
		defer rep.Close()
		step = rep.Launch
	}
	var l [1]float32
	run := func(n int) error {
		for range n {
			step()
			if !replay {
				t.be.Read(l[:], t.loss, 0)
			}
		}
		return t.be.Sync()
	}
	if err := run(warmup); err != nil {
		return 0, err
	}
	if measure != nil {
		measure(true)
	}
	start := time.Now()
	if err := run(steps); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if measure != nil {
		measure(false)
	}
	return d, nil
}
