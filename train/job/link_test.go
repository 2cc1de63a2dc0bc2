package job

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

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
	d := link.Defaults()
	cfg := d.Config
	cfg.Hidden, cfg.Fanouts, cfg.Batch, cfg.Epochs = 4, []int{2, 2}, 8, 2
	return Job{Config: cfg, Source: Source{Data: dir}, Device: "cpu", Threads: 1, Log: io.Discard,
		Link: LinkSettings{Task: TaskLink, Negatives: 1, NegativeDist: d.NegativeDist, Decoder: d.Decoder, Exclude: d.Exclude}}
}

// TestRunLinkInterrupted: a cancelled link job says it was interrupted
// (the command's exit status for a signal), and a run directory keeps
// what it saved.
func TestRunLinkInterrupted(t *testing.T) {
	j := linkJob(t)
	j.Options = train.Options{RunDir: filepath.Join(t.TempDir(), "run")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunLink(ctx, j); !errors.Is(err, ErrInterrupted) {
		t.Errorf("cancelled link job: %v, want ErrInterrupted", err)
	}
	s, err := RunLink(context.Background(), j)
	if err != nil || len(s.Epochs) != 2 {
		t.Fatalf("link job: %v", err)
	}
}

// TestRunLinkDevices: --devices 2 on the CPU trains the link predictor as
// one device does with the same global batch (no exclusion: each rank
// would exclude its own share), within float32 rounding.
func TestRunLinkDevices(t *testing.T) {
	j := linkJob(t)
	j.Link.Exclude = link.ExcludeNone
	one, err := RunLink(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	j.Devices, j.Config.Batch = 2, j.Config.Batch/2 // --batch is per device
	two, err := RunLink(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	for e := range one.Epochs {
		if a, b := two.Epochs[e].Loss, one.Epochs[e].Loss; math.Abs(a-b) > 1e-5*math.Abs(b) {
			t.Errorf("epoch %d: two devices' loss %v, one device's %v", e+1, a, b)
		}
	}
}

// TestLinkUnsupported: a link job asked for a mode or a placement the link
// trainer does not have is refused before any work, naming what was asked
// and what task link supports.
func TestLinkUnsupported(t *testing.T) {
	for _, c := range []struct {
		asked string
		set   func(*Job)
	}{
		{"--replicate 0.2", func(j *Job) { j.Placement.Replicate = "0.2" }},
		{"--shard-features hosts", func(j *Job) { j.Placement.ShardFeatures = "hosts" }},
	} {
		j := linkJob(t)
		c.set(&j)
		_, err := RunLink(context.Background(), j)
		if err == nil || !strings.HasPrefix(err.Error(), c.asked+" is not supported with --task link") || !strings.Contains(err.Error(), "--mode eager, replay or auto") {
			t.Errorf("%s: %v", c.asked, err)
		}
		if _, err := RunLinkBench(context.Background(), Bench{Job: j, Modes: []Mode{Eager}, Steps: 1}); err == nil || !strings.Contains(err.Error(), c.asked) {
			t.Errorf("bench with %s: %v", c.asked, err)
		}
	}
}

// TestRunLinkHybrid: the hybrid mode of a link job (replay over tiered
// features, --cache-rows of the highest-degree rows cached) trains as the
// replay mode does, bit for bit, on one device and on a group of two
// (each with a store of its own), and says what it placed and read from
// host memory; a hot ratio is refused, naming --hot-ratio 0.
func TestRunLinkHybrid(t *testing.T) {
	var j Job
	for _, devices := range []int{0, 2} {
		j = linkJob(t)
		j.Mode, j.Devices = Replay, devices
		want, err := RunLink(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		j.Mode, j.Log, j.Hybrid = Hybrid, &log, HybridSettings{CacheRows: 20, HotSpec: "auto", HotAuto: true}
		got, err := RunLink(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		for e := range want.Epochs {
			if got.Epochs[e].Loss != want.Epochs[e].Loss {
				t.Errorf("%d devices, epoch %d: loss %v hybrid, %v replay", devices, e+1, got.Epochs[e].Loss, want.Epochs[e].Loss)
			}
		}
		stats := "hybrid: "
		if devices > 0 {
			stats = "hybrid (device 1): "
		}
		if got.Test.AUC != want.Test.AUC || strings.Count(log.String(), "feature cache: 20 of 80 rows") != 1 || !strings.Contains(log.String(), stats) {
			t.Errorf("%d devices: test ROC-AUC %v hybrid, %v replay; log:\n%s", devices, got.Test.AUC, want.Test.AUC, log.String())
		}
	}
	j.Hybrid = HybridSettings{CacheRows: -1, HotSpec: "0.1", HotRatio: 0.1}
	if _, err := RunLink(context.Background(), j); err == nil || !strings.Contains(err.Error(), "give --hot-ratio 0") {
		t.Errorf("hybrid with --hot-ratio 0.1: %v", err)
	}
}
