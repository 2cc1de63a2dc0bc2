package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/train/link"
)

// Tasks a job trains for (--task).
const (
	TaskNode = "node" // node classification (the default)
	TaskLink = "link" // link prediction (package train/link)
)

// LinkSettings are a job's link-prediction settings; they matter only
// with Task link.
type LinkSettings struct {
	Task         string // TaskNode ("" too) or TaskLink
	Negatives    int    // negatives per positive edge
	NegativeDist string // uniform or degree
	Decoder      string // dot or mlp
	Exclude      string // reverse, self or none
	Embed        int    // embedding width (0: the hidden width)
}

// IsLink reports whether the job trains a link predictor.
func (l LinkSettings) IsLink() bool { return l.Task == TaskLink }

// CheckTask checks a --task value.
func CheckTask(s string) error {
	if s != "" && s != TaskNode && s != TaskLink {
		return fmt.Errorf("task: %s, want node or link", Shown(s))
	}
	return nil
}

// LinkSummaryFile is where a link run's summary goes in its run directory.
const LinkSummaryFile = "link_summary.json"

// RunLink trains a link predictor on one device with the eager driver, or
// the replay driver (Auto: replay on a GPU, eager on the CPU). A preset
// generated in memory is split 0.85/0.05/0.1 with one fixed negative per
// held-out edge, keyed by the run's seed; a dataset directory must hold a
// link task (import or gen --link-split). With a run directory it writes
// LinkSummaryFile there.
func RunLink(ctx context.Context, j Job) (*link.Summary, error) {
	switch {
	case j.Devices != 0 || j.Launch != nil:
		return nil, errors.New("task link: trains on one device (no --devices, no launcher) for now")
	case j.Mode == Hybrid:
		return nil, errors.New("task link: the modes are eager and replay (no hybrid) for now")
	}
	cfg := link.Config{Config: j.Config, Embed: j.Link.Embed, Negatives: j.Link.Negatives,
		NegativeDist: j.Link.NegativeDist, Decoder: j.Link.Decoder, Exclude: j.Link.Exclude}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ds, err := j.load()
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	if ds.Link == nil && j.Source.Data == "" {
		o := linksplit.Options{Fractions: linksplit.Fractions{Train: 0.85, Valid: 0.05, Test: 0.1}, Negatives: 1, Seed: cfg.Seed}
		if err := linksplit.Apply(ds, o); err != nil {
			return nil, err
		}
		fmt.Fprintf(j.Log, "split %s's edges 0.85/0.05/0.1 for the link task: %d training edges\n", ds.Name, dataset.Pairs(ds.Link.Train))
	}
	be, desc, err := OpenBackend(j.Device, j.Threads, j.CUDA, j.Log)
	if err != nil {
		return nil, err
	}
	defer CloseBackend(be)
	mode := j.Mode.Resolve(be)
	if mode == Replay {
		be = WithCapture(be)
	}
	fmt.Fprintf(j.Log, "training a link predictor (%s, %s decoder, %d %s negatives per edge, exclude %s) on %s, %s\n",
		cfg.Model, cfg.Decoder, cfg.Negatives, cfg.NegativeDist, cfg.Exclude, desc, mode)
	tr, err := link.New(be, ds, cfg)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	tr.OnEpoch = func(st link.EpochStats) { fmt.Fprintln(j.Log, EpochLine(st)) }
	run := tr.Run
	if mode == Replay {
		run = tr.RunReplay
	}
	s, err := run(ctx)
	if err != nil {
		return nil, err
	}
	if dir := j.Options.RunDir; dir != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := checkpoint.WriteFileAtomic(filepath.Join(dir, LinkSummaryFile), append(b, '\n')); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// EpochLine is a link epoch's line of progress.
func EpochLine(st link.EpochStats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d: loss %.4f, pairs right %.4f", st.Epoch, st.Loss, st.TrainAcc)
	if v := st.Valid; v != nil {
		fmt.Fprintf(&b, ", valid %s", MetricsText(*v))
	}
	fmt.Fprintf(&b, " (%.2fs)", st.Seconds)
	return b.String()
}

// MetricsText renders link metrics: ROC-AUC, AP, MRR and Hits@K.
func MetricsText(m link.Metrics) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ROC-AUC %.4f, AP %.4f, MRR %.4f", m.AUC, m.AP, m.MRR)
	for i, h := range m.Hits {
		fmt.Fprintf(&b, ", Hits@%d %.4f", link.HitsAt[i], h)
	}
	return b.String()
}
