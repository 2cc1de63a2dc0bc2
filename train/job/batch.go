package job

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// groupBatch turns the batch flags into the global batch of a group of n
// ranks (train.Config.Batch, which the trainer splits over the ranks), as
// data-parallel trainers count it (PyTorch DDP, DGL, PyG): --batch is the
// seeds of one step on each device, so the global batch is n times larger
// and an epoch has about 1/n of one device's steps; --global-batch B splits
// B over the ranks instead (the run that reproduces one device). Nothing
// rescales the learning rate. It says what it chose, once (w).
func (j *Job) groupBatch(cfg *train.Config, n int, w io.Writer) error {
	if j.GlobalBatch < 0 {
		return fmt.Errorf("global-batch: %d, want a positive count of seeds", j.GlobalBatch)
	}
	if j.GlobalBatch > 0 && j.BatchGiven {
		return fmt.Errorf("batch %d and global-batch %d: give one (--batch counts the seeds of each device, --global-batch those of the whole group)", cfg.Batch, j.GlobalBatch)
	}
	if n <= 1 {
		if j.GlobalBatch > 0 {
			cfg.Batch = j.GlobalBatch
		}
		return nil
	}
	if j.GlobalBatch > 0 {
		if j.GlobalBatch%n != 0 {
			return fmt.Errorf("global-batch: %d seeds do not split evenly over %d devices; choose a multiple of %d", j.GlobalBatch, n, n)
		}
		cfg.Batch = j.GlobalBatch
		fmt.Fprintf(w, "batch: global batch %d split over %d devices (%d each)\n", cfg.Batch, n, cfg.Batch/n)
		return nil
	}
	per := cfg.Batch
	cfg.Batch = per * n
	fmt.Fprintf(w, "batch: %d seeds per device x %d devices = global batch %d (an epoch has 1/%d of one device's steps; the learning rate is not rescaled; --global-batch %d would split %d over the devices)\n",
		per, n, cfg.Batch, n, per, per)
	return nil
}

// fitBatch makes cfg's batch fit ds's training split: where the split is
// smaller, an epoch is one batch of the whole split (rounded up to a
// multiple of the group's size, which every batch must divide by), as
// PyG's and DGL's loaders take a batch larger than their data, and a line
// on w says so. Planetoid's splits (Cora: 140 vertices) are smaller than
// the default batch.
func (j *Job) fitBatch(cfg *train.Config, ds *dataset.Dataset, group int, w io.Writer) {
	n, unit := trainItems(*cfg, ds)
	if cfg.Batch <= n || n == 0 {
		return
	}
	fit := (n + group - 1) / group * group
	if j.BatchGiven || j.GlobalBatch > 0 {
		fmt.Fprintf(w, "batch: %d is larger than the training split (%d %s in %s): an epoch is one batch of %d\n", cfg.Batch, n, unit, ds.Name, fit)
	} else {
		batch := fmt.Sprintf("default batch of %d", cfg.Batch)
		if group > 1 {
			batch = fmt.Sprintf("default global batch of %d (%d per device)", cfg.Batch, cfg.Batch/group)
		}
		fmt.Fprintf(w, "batch: the training split (%d %s in %s) is smaller than the %s: an epoch is one batch of %d\n", n, unit, ds.Name, batch, fit)
	}
	cfg.Batch = fit
}
