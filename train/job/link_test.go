package job

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/link"
)

// linkJob writes a ring of 80 vertices with a link task and returns a
// link job on it, on the CPU.
func linkJob(t *testing.T) Job {
	t.Helper()
	const n = 80
	var src, dst []int32
	for i := int32(0); i < n; i++ {
		src, dst = append(src, i, i), append(dst, (i+1)%n, (i*7+3)%n)
	}
	g, err := graph.FromEdges(n, src, dst, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	ds := &dataset.Dataset{Name: "ring", Graph: g, Symmetric: true, Features: make([]float32, 2*n), FeatDim: 2,
		Labels: make([]int32, n), NumClasses: 1, Train: []int64{0}}
	if err := linksplit.Apply(ds, linksplit.Options{Fractions: linksplit.Fractions{Train: 0.8, Valid: 0.1, Test: 0.1}, Negatives: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ring")
	if err := dataset.Write(dir, ds); err != nil {
		t.Fatal(err)
	}
	cfg := train.Defaults()
	cfg.Task, cfg.Link = train.TaskLink, train.LinkDefaults()
	cfg.Hidden, cfg.Fanouts, cfg.Batch, cfg.Epochs = 4, []int{2, 2}, 8, 2
	return Job{Config: cfg, Source: Source{Data: dir}, Device: "cpu", Threads: 1, Log: io.Discard}
}

// losses runs j and returns its summary and every epoch's loss.
func losses(t *testing.T, j Job) (*train.Summary, []float64) {
	t.Helper()
	var out []float64
	j.Options.OnEpoch = func(st train.EpochStats) { out = append(out, st.Loss) }
	s, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	return s, out
}

// TestLinkJobInterrupted: a link job stopped by a signal after its first
// epoch says it was interrupted (the command's exit status for a signal)
// and its run directory keeps a resumable checkpoint of where it stopped
// (epoch 1 done, at the first step of the second); the resumed run trains
// the second epoch and leaves the run's files: its checkpoints, one
// metrics line per epoch, the summary and the encoder.
func TestLinkJobInterrupted(t *testing.T) {
	j := linkJob(t)
	run := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j.Options = train.Options{RunDir: run, OnEpoch: func(train.EpochStats) { cancel() }}
	if _, err := Run(ctx, j); !errors.Is(err, ErrInterrupted) {
		t.Errorf("interrupted link job: %v, want ErrInterrupted", err)
	}
	st, err := checkpoint.ReadState(filepath.Join(run, checkpoint.LastCheckpoint))
	if err != nil || st.Epoch != 1 || st.StepInEpoch != 0 || st.BestEpoch != 1 {
		t.Fatalf("the interrupted run's last.ckpt: state %+v, %v; want epoch 1 done, step 0, best epoch 1", st, err)
	}
	j.Options = train.Options{RunDir: run, Resume: true}
	s, trained := losses(t, j)
	if s.Epochs != 2 || len(trained) != 1 || s.Task != train.TaskLink || !(s.Test[link.MetricAUC] > 0) {
		t.Fatalf("resumed link job: %d epochs in all, %d trained now; summary %+v", s.Epochs, len(trained), s)
	}
	for _, f := range []string{checkpoint.LastCheckpoint, checkpoint.BestCheckpoint, checkpoint.SummaryFile, EncoderFile} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("the run directory lacks %s: %v", f, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(run, checkpoint.MetricsFile)); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Errorf("metrics.jsonl: %q, %v; want a line per epoch", b, err)
	}
}

// TestLinkJobDevices: --devices 2 on the CPU trains the link predictor as
// one device does with the same global batch (no exclusion: each rank
// would exclude its own share), within float32 rounding.
func TestLinkJobDevices(t *testing.T) {
	j := linkJob(t)
	j.Config.Link.Exclude = train.ExcludeNone
	_, one := losses(t, j)
	j.Devices, j.Config.Batch = 2, j.Config.Batch/2 // --batch is per device
	_, two := losses(t, j)
	if len(one) != 2 || len(two) != 2 {
		t.Fatalf("epochs: one device %d, two %d; want 2", len(one), len(two))
	}
	for e := range one {
		if a, b := two[e], one[e]; math.Abs(a-b) > 1e-5*math.Abs(b) {
			t.Errorf("epoch %d: two devices' loss %v, one device's %v", e+1, a, b)
		}
	}
}

// TestLinkUnsupported: a link job asked for a placement the link task does
// not have is refused before any work, naming the setting, and outputs of
// the other task are refused.
func TestLinkUnsupported(t *testing.T) {
	for _, c := range []struct {
		asked string
		set   func(*Job)
	}{
		{"replicate: 0.2", func(j *Job) { j.Placement.Replicate = "0.2" }},
		{"shard-features: hosts", func(j *Job) { j.Placement.ShardFeatures = "hosts" }},
		{"scores: pairs.npy: the scores go into the run directory", func(j *Job) { j.Outputs.Scores = "pairs.npy" }},
	} {
		j := linkJob(t)
		c.set(&j)
		if _, err := Run(context.Background(), j); err == nil || !strings.HasPrefix(err.Error(), c.asked) {
			t.Errorf("%s: %v", c.asked, err)
		}
	}
	j, _ := tinyJob(t, train.Eager)
	j.Outputs.Scores = "pairs.npy"
	if _, err := Run(context.Background(), j); err == nil || !strings.Contains(err.Error(), "pairs are scored by a link predictor") {
		t.Errorf("scores of a node task: %v", err)
	}
}

// TestLinkJobHybrid: the hybrid mode of a link job (replay over tiered
// features, --cache-rows of the highest-degree rows cached) trains as the
// replay mode does, bit for bit, on one device and on a group of two
// (each with a store of its own), and says what it placed and read from
// host memory; a hot ratio is refused, naming --hot-ratio 0.
func TestLinkJobHybrid(t *testing.T) {
	var j Job
	for _, devices := range []int{0, 2} {
		j = linkJob(t)
		j.Mode, j.Devices = train.Replay, devices
		want, wantLoss := losses(t, j)
		var log strings.Builder
		j.Mode, j.Log, j.Hybrid = train.Hybrid, &log, HybridSettings{CacheRows: 20, HotSpec: "auto", HotAuto: true, SuperBatch: 1}
		got, gotLoss := losses(t, j)
		if len(gotLoss) != len(wantLoss) || len(wantLoss) != 2 {
			t.Fatalf("%d devices: %d hybrid epochs, %d replay; want 2", devices, len(gotLoss), len(wantLoss))
		}
		for e := range wantLoss {
			if gotLoss[e] != wantLoss[e] {
				t.Errorf("%d devices, epoch %d: loss %v hybrid, %v replay", devices, e+1, gotLoss[e], wantLoss[e])
			}
		}
		if got.Test[link.MetricAUC] != want.Test[link.MetricAUC] || strings.Count(log.String(), "feature cache: 20 of 80 rows") != 1 {
			t.Errorf("%d devices: test ROC-AUC %v hybrid, %v replay; log:\n%s", devices, got.Test[link.MetricAUC], want.Test[link.MetricAUC], log.String())
		}
	}
	j.Hybrid = HybridSettings{CacheRows: -1, HotSpec: "0.1", HotRatio: 0.1}
	if _, err := Run(context.Background(), j); err == nil || !strings.Contains(err.Error(), "give --hot-ratio 0") {
		t.Errorf("hybrid with --hot-ratio 0.1: %v", err)
	}
}
