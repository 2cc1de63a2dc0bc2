package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/export"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
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
	// EvalNegatives, EvalEdges and EpochSteps are link.Config's: held-out
	// edges ranked against negatives drawn at evaluation, at most
	// EvalEdges of each set, and epochs of at most EpochSteps steps.
	EvalNegatives, EvalEdges, EpochSteps int
	// Embeddings, when set, is a .npy file that gets every vertex's
	// embedding from the best model (float32 [N, embed]).
	Embeddings string
	// Scores, when set, is a .npy file of vertex pairs (int32 or int64
	// [pairs, 2]) that the best model scores into ScoresFile in the run
	// directory (float32 [pairs]).
	Scores string
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

// Files of a link run in its run directory: the summary, the best
// model's encoder under PyTorch Geometric's names and its MLP decoder as
// torch.nn.Sequential's state dict, and the scores of --scores's pairs.
const (
	LinkSummaryFile = "link_summary.json"
	EncoderFile     = "encoder.safetensors"
	DecoderFile     = "decoder.safetensors"
	ScoresFile      = "scores.npy"
)

// RunLink trains a link predictor on one device with the eager driver, or
// the replay driver (Auto: replay on a GPU, eager on the CPU). A preset
// generated in memory is split 0.85/0.05/0.1 with one fixed negative per
// held-out edge, keyed by the run's seed; a dataset directory must hold a
// link task (import or gen --link-split). With a run directory it writes
// LinkSummaryFile there.
func RunLink(ctx context.Context, j Job) (*link.Summary, error) {
	if err := checkLinkJob(j); err != nil {
		return nil, err
	}
	var s *link.Summary
	if j.Launch == nil || j.Launch.Rank == 0 { // rank 0 writes a launched job's outputs
		if err := checkLinkOutputs(j); err != nil {
			return nil, err
		}
		if err := checkLinkRunDir(j.Options.RunDir, j.Options.Resume, j.Options.Force); err != nil {
			return nil, err
		}
	}
	var err error
	switch {
	case j.Launch != nil:
		s, err = runLinkProcess(ctx, j)
	case j.Devices != 0:
		s, err = runLinkDevices(ctx, j)
	default:
		err = runLinkOne(ctx, j, &s)
	}
	if err != nil && ctx.Err() != nil {
		where := "nothing was saved (no --out)"
		if j.Options.RunDir != "" {
			where = fmt.Sprintf("%s holds the run as of its last whole epoch: --resume continues it", j.Options.RunDir)
		}
		fmt.Fprintf(j.Log, "interrupted: %s\n", where)
		return nil, ErrInterrupted
	}
	return s, err
}

// runLinkOne trains j's link predictor on one device into *s.
func runLinkOne(ctx context.Context, j Job, s **link.Summary) error {
	return withLinkTrainer(j, j.Mode, func(tr *link.Trainer, mode Mode, _ string) error {
		tr.OnEpoch = func(st link.EpochStats) { fmt.Fprintln(j.Log, EpochLine(st)) }
		if tr.RunDir = j.Options.RunDir; j.Options.Resume {
			if err := tr.Resume(); err != nil {
				return err
			}
		}
		run := tr.Run
		if mode.captures() {
			run = tr.RunReplay
		}
		var err error
		if *s, err = run(ctx); err != nil {
			return err
		}
		return writeLinkOutputs(tr, *s, j)
	})
}

// withLinkTrainer makes j's link trainer for mode m (Auto: replay on a
// GPU, eager on the CPU) and hands it to fn with the resolved mode and
// the device's description; it frees everything afterwards.
func withLinkTrainer(j Job, m Mode, fn func(tr *link.Trainer, mode Mode, device string) error) error {
	switch {
	case j.Devices != 0 || j.Launch != nil:
		return errors.New("task link: bench and eval measure one device (no --devices, no launcher) for now")
	}
	cfg, err := linkConfig(j, 1)
	if err != nil {
		return err
	}
	ds, err := loadLinkData(j, cfg)
	if err != nil {
		return err
	}
	defer ds.Close()
	be, desc, err := OpenBackend(j.Device, j.Threads, j.CUDA, j.Log)
	if err != nil {
		return err
	}
	defer CloseBackend(be)
	mode := m.Resolve(be)
	if mode.captures() {
		be = WithCapture(be)
	}
	printLinkStart(j.Log, cfg, desc, mode)
	if mode != Hybrid {
		tr, err := link.New(be, ds, cfg)
		if err != nil {
			return err
		}
		defer tr.Close()
		return fn(tr, mode, desc)
	}
	tr, store, err := newLinkHybrid(j, be, ds, cfg, nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := fn(tr, mode, desc); err != nil {
		return err
	}
	return printTierStats(j, store, "")
}

// printLinkStart says what a link job trains, where and in which mode.
func printLinkStart(w io.Writer, cfg link.Config, where string, mode Mode) {
	fmt.Fprintf(w, "link predictor (%s, %s decoder, %d %s negatives per edge, exclude %s) on %s, %s\n",
		cfg.Model, cfg.Decoder, cfg.Negatives, cfg.NegativeDist, cfg.Exclude, where, mode)
}

// linkConfig is the job's link configuration for a group of n devices:
// --batch edges per device (--global-batch: over the group), as the node
// path counts seeds.
func linkConfig(j Job, n int) (link.Config, error) {
	cfg := link.Config{Config: j.Config, Embed: j.Link.Embed, Negatives: j.Link.Negatives,
		NegativeDist: j.Link.NegativeDist, Decoder: j.Link.Decoder, Exclude: j.Link.Exclude,
		EvalNegatives: j.Link.EvalNegatives, EvalEdges: j.Link.EvalEdges, EpochSteps: j.Link.EpochSteps}
	if n > 1 {
		cfg.Batch *= n
		if j.GlobalBatch > 0 {
			cfg.Batch = j.GlobalBatch
		}
	}
	if j.FeatureDType != "" {
		var err error
		if cfg.Features, err = ParseFeatureDType(j.FeatureDType); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// loadLinkData loads the job's dataset with its link task (a preset in
// memory is split here) and says when the batch makes --exclude take
// every training edge out.
func loadLinkData(j Job, cfg link.Config) (*dataset.Dataset, error) {
	ds, err := j.load()
	if err != nil {
		return nil, err
	}
	if ds.Link == nil && j.Source.Data == "" {
		o := linksplit.Options{Fractions: linksplit.Fractions{Train: 0.85, Valid: 0.05, Test: 0.1}, Negatives: 1, Seed: cfg.Seed}
		if err := linksplit.Apply(ds, o); err != nil {
			ds.Close()
			return nil, err
		}
		fmt.Fprintf(j.Log, "split %s's edges 0.85/0.05/0.1 for the link task: %d training edges\n", ds.Name, dataset.Pairs(ds.Link.Train))
	}
	if ds.Link != nil && cfg.Exclude != link.ExcludeNone && cfg.Batch >= dataset.Pairs(ds.Link.Train) {
		fmt.Fprintf(j.Log, "note: a batch of %d edges holds all %d training edges, and --exclude %s takes every one out of the sampled neighbourhoods: training sees no edges at all; use --exclude none, or a smaller --batch\n",
			cfg.Batch, dataset.Pairs(ds.Link.Train), cfg.Exclude)
	}
	return ds, nil
}

// linkSupport is what a link job can be asked for.
const linkSupport = "task link trains with --mode eager, replay or auto on one device, on --devices N of one process (CPU devices, or GPUs joined by NCCL) or in processes under a launcher (fanout launch, torchrun, mpirun), every device holding the whole graph and feature table (with --mode hybrid on one device or --devices N: the feature rows tiered)"

// linkUnsupported is the error of a link job asked for what, which the
// link trainer does not have.
func linkUnsupported(what string) error {
	return fmt.Errorf("%s is not supported with --task link yet: %s", what, linkSupport)
}

// checkLinkJob refuses, before any work, a link job asked for a mode or a
// placement that the link trainer does not have, naming what it has.
func checkLinkJob(j Job) error {
	p := j.Placement
	switch {
	case p.Replicate != "":
		return linkUnsupported("--replicate " + Shown(p.Replicate))
	case p.ShardFeatures == "on" || p.ShardFeatures == "hosts":
		return linkUnsupported("--shard-features " + p.ShardFeatures)
	}
	return nil
}

// checkLinkRunDir refuses to overwrite a link run in dir unless resume
// continues it or force removes it (which it does here).
func checkLinkRunDir(dir string, resume, force bool) error {
	if dir == "" {
		return nil
	}
	_, err := os.Stat(filepath.Join(dir, link.StateFile))
	held := err == nil
	switch {
	case resume && !held:
		return fmt.Errorf("--resume: %s holds no link run (no %s)", dir, link.StateFile)
	case resume:
		return nil
	case held && !force:
		return fmt.Errorf("%s holds a link run: --resume continues it, --force starts over", dir)
	case held:
		for _, f := range []string{link.StateFile, link.LastFile, link.BestFile, LinkSummaryFile, EncoderFile, DecoderFile, ScoresFile} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// checkLinkOutputs checks the output settings before any work.
func checkLinkOutputs(j Job) error {
	if j.Link.Scores != "" && j.Options.RunDir == "" {
		return fmt.Errorf("scores: %s: the scores go into the run directory; give --out", Shown(j.Link.Scores))
	}
	return nil
}

// writeLinkOutputs writes what the job asks for from the best model: the
// summary and the exports into the run directory, the embeddings, the
// pairs' scores.
func writeLinkOutputs(tr *link.Trainer, s *link.Summary, j Job) error {
	dir := j.Options.RunDir
	if dir == "" && j.Link.Embeddings == "" {
		return nil
	}
	if err := tr.UseBest(); err != nil {
		return err
	}
	if dir != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(dir, LinkSummaryFile), append(b, '\n')); err != nil {
			return err
		}
		enc, meta, err := tr.EncoderTensors()
		if err != nil {
			return err
		}
		if err := export.WriteSafetensors(filepath.Join(dir, EncoderFile), enc, meta); err != nil {
			return err
		}
		dec, err := tr.DecoderTensors()
		if err != nil {
			return err
		}
		if dec != nil {
			if err := export.WriteSafetensors(filepath.Join(dir, DecoderFile), dec, map[string]string{"decoder": "Sequential(Linear, ReLU, Linear) over the element-wise product of two embeddings"}); err != nil {
				return err
			}
		}
	}
	scores := ""
	if j.Link.Scores != "" {
		scores = filepath.Join(dir, ScoresFile)
	}
	return writeEmbeddingsAndScores(tr, j.Link.Embeddings, j.Link.Scores, scores)
}

// readPairs reads a .npy of vertex pairs, int32 or int64 [pairs, 2].
func readPairs(path string) ([]int32, error) {
	data, shape, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scores: %w", err)
	}
	if len(shape) != 2 || shape[1] != 2 {
		return nil, fmt.Errorf("scores: %s: shape %v, want [pairs, 2]", path, shape)
	}
	switch p := data.(type) {
	case []int32:
		return p, nil
	case []int64:
		out := make([]int32, len(p))
		for i, v := range p {
			if int64(int32(v)) != v {
				return nil, fmt.Errorf("scores: %s: pair %d has vertex %d, beyond int32", path, i/2, v)
			}
			out[i] = int32(v)
		}
		return out, nil
	}
	descr, _ := npy.Descr(data)
	return nil, fmt.Errorf("scores: %s: dtype %s, want int32 or int64", path, descr)
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
