package job

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// TestTypedHostMemoryJob: --host-memory below the sum of a typed dataset
// directory's per-type feat.npy sizes (hetero-tiny's papers and fields)
// leaves every type's features on disk, and the hybrid run trains as
// replay does, epoch for epoch, saying each type's three tiers and the
// rows read from each (every row cached: the disk tiers' staging and
// tables alone take about the features' bytes at this size); above the
// sum the features are opened as today. Half the sum, which does not
// hold the stagings and tables, and a truncated type's feat.npy are
// errors of one line naming the flag, or the file and what the manifest
// says of the type.
func TestTypedHostMemoryJob(t *testing.T) {
	p, ds, dir := writePreset(t, "hetero-tiny")
	var sum int64
	for _, name := range []string{"paper", "field_of_study"} {
		st, err := os.Stat(filepath.Join(dir, dataset.TypeDir(name), dataset.FeatFile))
		if err != nil {
			t.Fatal(err)
		}
		sum += st.Size()
	}
	cfg := PresetConfig(p)
	cfg.Epochs = 2
	j := Job{Config: cfg, Source: Source{Data: dir}, Device: "cpu", Threads: 2, Mode: train.Replay}
	_, want := losses(t, j)
	paper := filepath.Join(dir, dataset.TypeDir("paper"), dataset.FeatFile)
	for _, c := range []struct {
		size   int64
		onDisk bool
	}{{sum - 1, true}, {sum, false}} {
		var log strings.Builder
		k := j
		k.Mode, k.Log = train.Hybrid, &log
		k.Hybrid = HybridSettings{CacheRows: -1, HotSpec: "auto", HotAuto: true, HostMemory: fmt.Sprint(c.size)}
		_, got := losses(t, k)
		if len(want) != 2 || !slices.Equal(got, want) {
			t.Fatalf("--host-memory %d: epochs' losses %v, replay %v", c.size, got, want)
		}
		for _, say := range []string{"stay on disk", filepath.Join(dir, "types/{paper,field_of_study}/feat.npy"),
			"disk, read from " + paper, "hybrid: rows by tier", "hybrid: epoch 1: GPU cache"} {
			if strings.Contains(log.String(), say) != c.onDisk {
				t.Errorf("--host-memory %d of %d: the log saying %q is %t:\n%s", c.size, sum, say, !c.onDisk, log.String())
			}
		}
	}
	k := j
	k.Mode, k.Log = train.Hybrid, &strings.Builder{}
	k.Hybrid = HybridSettings{CacheRows: 500, HotSpec: "0", HostMemory: fmt.Sprint(sum / 2)}
	if _, err := Run(context.Background(), k); err == nil || !strings.Contains(err.Error(), "the disk tier's staging for the rows of a step needs") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--host-memory %d of %d, below the disk tiers' staging and tables: %v", sum/2, sum, err)
	}
	cut := filepath.Join(t.TempDir(), "cut")
	if err := dataset.Write(cut, ds); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(cut, dataset.TypeDir("paper"), dataset.FeatFile), 1000); err != nil {
		t.Fatal(err)
	}
	k = j
	k.Source.Data, k.Log, k.Mode = cut, &strings.Builder{}, train.Hybrid
	k.Hybrid = HybridSettings{CacheRows: 500, HotSpec: "0", HostMemory: "1KiB"}
	_, err := Run(context.Background(), k)
	if msg := "types/paper/feat.npy: truncated: 1000 bytes, but manifest.yaml says type paper has count = "; err == nil ||
		!strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%v, want one line naming %q", err, msg)
	}
}
