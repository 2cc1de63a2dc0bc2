package link

import (
	"context"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// rankBatch is the positive edges of one step on this rank.
func (t *Trainer) rankBatch() int {
	if t.group == nil {
		return t.cfg.Batch
	}
	return t.cfg.Batch / t.group.Size()
}

// allocShare makes a rank's stand-in order, from which SliceSeeds slices
// the step's positives over the whole group.
func (t *Trainer) allocShare() error {
	var err error
	if t.standIn, err = t.alloc(backend.I32, dataset.Pairs(t.ds.Link.Train)); err != nil {
		return err
	}
	if t.standBy, err = t.alloc(backend.I32, t.cfg.Batch); err != nil {
		return err
	}
	t.global = backend.Count{Buf: t.counts, Off: countGlobal, Cap: t.cfg.Batch}
	return nil
}

// rankOrder is this rank's share of an epoch's order of the training
// edges (train.RankShare), laid out so that SliceSeeds at step s with the
// rank's batch gives it.
func (t *Trainer) rankOrder(order []int32) []int32 {
	if t.group == nil {
		return order
	}
	return train.RankShare(order, t.cfg.Batch, t.group.Rank(), t.group.Size())
}

// scaleShare makes the rank's loss and its gradient its share of the
// step's: scaled by the rank's positives over the group's (each rank's
// pairs are the same multiple of its positives).
func (t *Trainer) scaleShare() {
	if t.group == nil {
		return
	}
	be, p := t.be, t.plan
	be.SliceSeeds(t.standIn, dataset.Pairs(t.ds.Link.Train), t.cfg.Batch, p.Clock, t.standBy, t.global)
	be.ScaleShare(t.dscores, t.npairs, 1, t.positives, t.global)
	be.ScaleShare(t.loss, p.One, 1, t.positives, t.global)
}

// reduceGrads sums every gradient over the group.
func (t *Trainer) reduceGrads() {
	if t.group == nil {
		return
	}
	t.group.AllReduceSum(t.m.Grads())
	for _, p := range t.dec.params {
		t.group.AllReduceSum(p.G)
	}
}

// reduceSums sums the epoch's loss and correct pairs over the group.
func (t *Trainer) reduceSums() {
	if t.group != nil {
		t.group.AllReduceSum(t.acc)
	}
}

// RunGroup trains a data-parallel group's trainers (one per rank, made by
// NewShared over one collective) with multigpu.RunRanks, each rank on a
// goroutine of its own locked to an OS thread, with the eager driver or,
// with replay, the replay driver. Every rank evaluates alike (the same
// weights), so they stop together; rank 0's summary is returned. A failing
// rank aborts the group (where its collectives can), so the others do not
// wait for it.
func RunGroup(ctx context.Context, trs []*Trainer, replay bool) (*Summary, error) {
	sums := make([]*Summary, len(trs))
	colls := make([]backend.Collective, len(trs))
	for i, tr := range trs {
		if tr.group == nil || tr.group.Rank() != i || tr.group.Size() != len(trs) {
			return nil, fmt.Errorf("link: trainer %d is not rank %d of a group of %d", i, i, len(trs))
		}
		if i > 0 {
			tr.RunDir = "" // rank 0 saves the run
		}
		colls[i] = tr.group
	}
	err := multigpu.RunRanks(colls, func(i int) (err error) {
		run := trs[i].Run
		if replay {
			run = trs[i].RunReplay
		}
		sums[i], err = run(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sums[0], nil
}
