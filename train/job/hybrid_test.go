package job

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// TestHostMemoryJob: --host-memory below the size of a dataset
// directory's feat.npy leaves the features on disk, and the hybrid run
// trains as replay does, epoch for epoch, saying the three tiers and the
// rows read from each; above it the features are opened as today. (The
// step is smaller than the preset's, whose conservative envelope, the
// disk tier's staging, is every row of tiny.) A bad size, another mode,
// a generated preset, a truncated feat.npy and a size that does not hold
// the disk tier's staging and tables are errors of one line naming the
// flag or the file and the manifest's fields, as is --stage-host-rows
// without --host-memory or with features that fit it (no disk tier).
func TestHostMemoryJob(t *testing.T) {
	p, ds, dir := writePreset(t, "tiny")
	cfg := PresetConfig(p)
	cfg.Epochs, cfg.Batch, cfg.Fanouts = 2, 64, []int{5, 5}
	j := Job{Config: cfg, Source: Source{Data: dir}, Device: "cpu", Threads: 2, Mode: train.Replay}
	_, want := losses(t, j)
	// The command line's --hot-ratio auto: with the features on disk the
	// run has no hot vertices (their CPU reads the whole table).
	for _, c := range []struct {
		size   string
		onDisk bool
		hot    string
	}{{"1536KiB", true, "auto"}, {"1GiB", false, "0"}} {
		var log strings.Builder
		k := j
		k.Mode, k.Log, k.Hybrid = train.Hybrid, &log, HybridSettings{CacheRows: 500, HotSpec: c.hot, HotAuto: c.hot == "auto", HostMemory: c.size}
		_, got := losses(t, k)
		if len(want) != 2 || !slices.Equal(got, want) {
			t.Fatalf("--host-memory %s: epochs' losses %v, replay %v", c.size, got, want)
		}
		for _, say := range []string{"stay on disk", "disk, read from " + filepath.Join(dir, "feat.npy"), "hybrid: rows by tier", "hybrid: epoch 1: GPU cache"} {
			if strings.Contains(log.String(), say) != c.onDisk {
				t.Errorf("--host-memory %s: the log saying %q is %t:\n%s", c.size, say, !c.onDisk, log.String())
			}
		}
	}
	for _, c := range []struct {
		edit func(*Job)
		want string
	}{
		{func(j *Job) { j.Hybrid.HostMemory = "lots" }, `host-memory: "lots" is not a size`},
		{func(j *Job) { j.Hybrid.HostBand = "wide" }, `host-band: "wide" is not a size`},
		{func(j *Job) { j.Hybrid.HostBand = "0.5" }, `host-band: "0.5" is not a size`},
		{func(j *Job) { j.Hybrid.HostBand = "0lots" }, `host-band: "0lots" is not a size`},
		{func(j *Job) { j.Hybrid.HostBand = "NaN" }, `host-band: "NaN" is not a size`},
		{func(j *Job) { j.Hybrid.HostMemory = "256KiB" }, "host-memory: 0.2 MiB (262144 bytes) asked, but the disk tier's staging for the rows of a step needs"},
		{func(j *Job) { j.Mode = train.Replay }, "host-memory: \"1536KiB\" caps the hybrid mode's host tier of features, and the mode is replay"},
		{func(j *Job) { j.Source = Source{Preset: "tiny"} }, "host-memory: a disk tier reads the features of a dataset directory (--data)"},
		{func(j *Job) { j.Hybrid.HostMemory, j.Hybrid.StageHost = "", true }, "stage-host-rows: stages the host tier's rows beside the rows read from disk, and without --host-memory"},
		{func(j *Job) { j.Hybrid.HostMemory, j.Hybrid.StageHost = "1GiB", true }, "stage-host-rows: tiny's features are in host memory"},
		{func(j *Job) {
			cut := filepath.Join(t.TempDir(), "cut")
			if err := dataset.Write(cut, ds); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(cut, "feat.npy"), 1<<20); err != nil {
				t.Fatal(err)
			}
			j.Source.Data, j.Hybrid.HostMemory = cut, "512KiB"
		}, "feat.npy: truncated: 1048576 bytes, but manifest.yaml says num_nodes = 16384, feat_dim = 32"},
	} {
		k := j
		k.Log, k.Mode, k.Hybrid = &strings.Builder{}, train.Hybrid, HybridSettings{CacheRows: 500, HotSpec: "0", HostMemory: "1536KiB"}
		c.edit(&k)
		if _, err := Run(context.Background(), k); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v, want one line naming %q", err, c.want)
		}
	}
}

// writePreset generates the preset name (seed 1) and writes it into a
// dataset directory.
func writePreset(t *testing.T, name string) (rmat.Preset, *dataset.Dataset, string) {
	t.Helper()
	p, err := rmat.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ds := traintest.Generate(t, p)
	dir := filepath.Join(t.TempDir(), name)
	if err := dataset.Write(dir, ds); err != nil {
		t.Fatal(err)
	}
	return p, ds, dir
}

// TestHostBandOption: --host-band reaches the driver as bytes, 0 as none
// (hybrid.Options.Band < 0) and nothing as the default (0).
func TestHostBandOption(t *testing.T) {
	for _, c := range []struct {
		spec string
		want int64
	}{{"", 0}, {"0", -1}, {"0MiB", -1}, {" 0 GiB", -1}, {"1GiB", 1 << 30}, {"4096", 4096}} {
		j := Job{Hybrid: HybridSettings{GPUMemory: "1GiB", HostBand: c.spec}}
		opt, err := j.hybridOptions(cpu.New(1), nil)
		if err != nil || opt.Band != c.want {
			t.Errorf("--host-band %q: Band %d (%v), want %d", c.spec, opt.Band, err, c.want)
		}
	}
}
