// Package multigpu trains one model data-parallel over several devices of
// one host from one process: each rank is a train.Trainer on its own
// backend, made with train.Options.Parallel (its collective), driven by its
// own goroutine locked to an OS thread (a CUDA context is current per
// thread). Each rank runs the same driver as one device would (eager or
// replay) on its slice of every global batch; the gradient all-reduce inside
// the step keeps the ranks' parameters identical, so rank 0 evaluates,
// writes checkpoints and metrics, and its summary is the run's.
//
// With N CPU backends and the in-process collective (backend/inproc) the
// same driver runs on a machine without a GPU.
package multigpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// Rank is one device of the group.
type Rank struct {
	Backend backend.Backend
	Coll    backend.Collective
	// Options are the rank's trainer options; Parallel is set by Run. Give
	// rank 0 the run's (RunDir, Progress); the others' should write nothing.
	Options train.Options
	// Started, when set, is called with the rank's trainer before it trains
	// (tests read parameters through it).
	Started func(*train.Trainer)
	// BeforeCapture, when set, is the rank's replay hook (the hybrid mode's
	// cache placement: train.ReplayOptions.BeforeCapture).
	BeforeCapture func(train.EnvelopeReport) error
	// Finished, when set, is called with the rank's trainer once it has
	// trained, before it is closed (to read the rank's figures).
	Finished func(*train.Trainer) error
}

// aborter is implemented by collectives that can release ranks waiting in
// a reduction when another rank failed (backend/inproc.Comm).
type aborter interface{ Abort(error) }

// Run trains cfg on ds over ranks with the driver of mode and returns rank
// 0's summary. The first rank error aborts the group and is returned; with
// a capturing mode, every backend must capture (backend.Capturer).
func Run(ctx context.Context, ds *dataset.Dataset, cfg train.Config, ranks []Rank, mode train.Mode, ropt train.ReplayOptions) (*train.Summary, error) {
	if len(ranks) == 0 {
		return nil, errors.New("multigpu: no ranks")
	}
	if cfg.Batch%len(ranks) != 0 {
		return nil, fmt.Errorf("batch: %d items do not split evenly over %d devices; choose a multiple of %d", cfg.Batch, len(ranks), len(ranks))
	}
	sums := make([]*train.Summary, len(ranks))
	colls := make([]backend.Collective, len(ranks))
	for i, r := range ranks {
		colls[i] = r.Coll
	}
	err := RunRanks(colls, func(i int) (err error) {
		sums[i], err = runRank(ctx, ds, cfg, ranks[i], mode, ropt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sums[0], nil
}

// firstError is the first rank's failure, or the interruption when every
// rank that stopped early was interrupted.
func firstError(errs []error) error {
	var interrupted error
	for r, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, train.ErrInterrupted):
			interrupted = err
		default:
			return fmt.Errorf("device %d: %w", r, err)
		}
	}
	return interrupted
}

func runRank(ctx context.Context, ds *dataset.Dataset, cfg train.Config, r Rank, mode train.Mode, ropt train.ReplayOptions) (*train.Summary, error) {
	opt := r.Options
	opt.Parallel = r.Coll
	opt.Mode = mode
	t, err := train.New(r.Backend, ds, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if r.Started != nil {
		r.Started(t)
	}
	var s *train.Summary
	if mode.Captures() {
		ropt.BeforeCapture = r.BeforeCapture
		s, _, err = t.RunReplay(ctx, ropt)
	} else {
		s, err = t.Run(ctx)
	}
	if err == nil && r.Finished != nil {
		err = r.Finished(t)
	}
	return s, err
}
