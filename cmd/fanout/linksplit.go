package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/train/job"
	"github.com/fanout-gnn/fanout/train/link"
)

// linkSplitFlags are gen's and import's flags of a link task.
type linkSplitFlags struct {
	split     *string
	negatives *int
	seed      *uint64
}

// addLinkSplitFlags registers --link-split, --link-negatives and
// --link-seed.
func addLinkSplitFlags(fs *flag.FlagSet) linkSplitFlags {
	return linkSplitFlags{
		split:     fs.String("link-split", "", "make a link-prediction task: TRAIN,VALID,TEST fractions of the undirected edges (e.g. 0.85,0.05,0.1); validation and test edges leave the graph"),
		negatives: fs.Int("link-negatives", 1, "with --link-split: fixed negatives stored per validation and test edge (1 for ROC-AUC and AP; more for MRR)"),
		seed:      fs.Uint64("link-seed", 1, "with --link-split: the seed of the split and of its negatives"),
	}
}

// options checks the flags before any work: nil without --link-split.
func (f linkSplitFlags) options() (*linksplit.Options, error) {
	if *f.split == "" {
		return nil, nil
	}
	fr, err := linksplit.Parse(*f.split)
	if err != nil {
		return nil, fmt.Errorf("--link-split: %w", err)
	}
	if *f.negatives < 1 {
		return nil, fmt.Errorf("--link-negatives %d: want at least 1", *f.negatives)
	}
	return &linksplit.Options{Fractions: fr, Negatives: *f.negatives, Seed: *f.seed}, nil
}

// linkDefaults are train's link-prediction settings before flags.
func linkDefaults() job.LinkSettings {
	d := link.Defaults()
	return job.LinkSettings{Task: job.TaskNode, Negatives: d.Negatives, NegativeDist: d.NegativeDist, Decoder: d.Decoder, Exclude: d.Exclude}
}

// runLinkTask trains j's link predictor when --task says link, and prints
// its line; done is false for a node task, which the caller trains.
func runLinkTask(ctx context.Context, j job.Job, stdout io.Writer) (done bool, err error) {
	if err := job.CheckTask(j.Link.Task); err != nil {
		return true, err
	}
	if !j.Link.IsLink() {
		return false, nil
	}
	s, err := job.RunLink(ctx, j)
	if err != nil || s == nil { // nil: a launched job's rank other than 0
		return true, err
	}
	fmt.Fprintf(stdout, "test %s (best validation ROC-AUC %.4f at epoch %d)\n", job.MetricsText(s.Test), s.BestValid.AUC, s.BestEpoch)
	return true, nil
}

// benchLinkTask measures the link step when --task says link, printing a
// line (or a JSON line) per driver; done is false for a node task.
func benchLinkTask(ctx context.Context, b job.Bench, asJSON bool, stdout io.Writer) (done bool, err error) {
	if err := job.CheckTask(b.Link.Task); err != nil {
		return true, err
	}
	if !b.Link.IsLink() {
		return false, nil
	}
	reps, err := job.RunLinkBench(ctx, b)
	for _, r := range reps {
		printJSONOr(stdout, asJSON, r, printLinkBench)
	}
	return true, err
}

// printLinkBench prints one driver's link step.
func printLinkBench(w io.Writer, r job.LinkBenchReport) {
	fmt.Fprintf(w, "link %s on %s (%s, %d positive edges x %d negatives): %.3f ms/step over %d steps", r.Mode, r.Device, r.Data, r.Batch, r.Negatives, r.StepMs, r.Steps)
	if r.Launches > 0 {
		fmt.Fprintf(w, "; per step %.0f launches, %.0f cuBLAS calls, %.2f host syncs", r.Launches, r.Gemms, r.HostSyncs)
	}
	fmt.Fprintln(w)
}
