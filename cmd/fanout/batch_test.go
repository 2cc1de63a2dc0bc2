package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// smallSplit writes tiny with only its first n training vertices, as a
// Planetoid split is smaller than the default batch (Cora: 140 of 2708).
func smallSplit(t *testing.T, n int) string {
	t.Helper()
	dir, full := t.TempDir(), genTiny(t)
	ds, err := dataset.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	ds.Train = ds.Train[:n]
	small := filepath.Join(dir, "small")
	if err := dataset.Write(small, ds); err != nil {
		t.Fatal(err)
	}
	return small
}

// epochStats reads every line of a run's metrics.jsonl.
func epochStats(t *testing.T, run string) []train.EpochStats {
	t.Helper()
	f, err := os.Open(filepath.Join(run, checkpoint.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stats []train.EpochStats
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var st train.EpochStats
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		stats = append(stats, st)
	}
	return stats
}

// epochSteps reads the steps of each epoch from a run's metrics.jsonl.
func epochSteps(t *testing.T, run string) []int {
	t.Helper()
	var steps []int
	for _, st := range epochStats(t, run) {
		steps = append(steps, st.Steps)
	}
	return steps
}

// TestBatchLargerThanSplit: a training split smaller than the default
// batch trains one batch of the whole split an epoch, saying so in one
// line; a --batch larger than the split does the same with a note that
// names it (as PyG's and DGL's loaders do), alone and on two devices. It
// was refused ("batch: 256 is larger than the training split"), which
// failed the README's Cora command.
func TestBatchLargerThanSplit(t *testing.T) {
	data := smallSplit(t, 141)
	for _, c := range []struct {
		args []string
		note string
	}{
		{nil, "batch: the training split (141 vertices in tiny) is smaller than the default batch of 256: an epoch is one batch of 141"},
		{[]string{"--batch", "5000"}, "batch: 5000 is larger than the training split (141 vertices in tiny): an epoch is one batch of 141"},
		{[]string{"--devices", "2"}, "batch: the training split (141 vertices in tiny) is smaller than the default global batch of 512 (256 per device): an epoch is one batch of 142"},
	} {
		run := filepath.Join(t.TempDir(), "run")
		args := append([]string{"train", "--data", data, "--device", "cpu", "--epochs", "2", "--out", run}, c.args...)
		code, out, stderr := fanout(t, args...)
		if code != 0 || !strings.Contains(out, "test accuracy") {
			t.Fatalf("%v: exit %d\n%s%s", c.args, code, out, stderr)
		}
		if n := strings.Count(stderr, c.note); n != 1 {
			t.Errorf("%v: the note %q appears %d times in:\n%s", c.args, c.note, n, stderr)
		}
		if got := epochSteps(t, run); len(got) != 2 || got[0] != 1 || got[1] != 1 {
			t.Errorf("%v: steps per epoch %v, want [1 1]", c.args, got)
		}
	}
	// A batch that fits is taken as given, without a note.
	code, _, stderr := fanout(t, "train", "--data", data, "--device", "cpu", "--epochs", "1", "--batch", "64")
	if code != 0 || strings.Contains(stderr, "batch:") {
		t.Errorf("--batch 64: exit %d\n%s", code, stderr)
	}
}
