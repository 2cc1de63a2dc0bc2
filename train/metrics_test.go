package train

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/checkpoint"
)

// metricsEpochs reads the epochs of a metrics file's lines, and the loss of
// each.
func metricsEpochs(t *testing.T, path string) (epochs []int, losses []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var st EpochStats
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		epochs, losses = append(epochs, st.Epoch), append(losses, st.Loss)
	}
	return epochs, losses
}

// TestResumeRepairsMetrics: a run killed between an epoch's metrics line
// and the checkpoint that covers it (here: a line past last.ckpt, and a
// line the kill cut short) resumes to one line per epoch, in order, each
// the uninterrupted run's. Before, the resumed run appended after them:
// epochs 1, 2, 3, 3.
func TestResumeRepairsMetrics(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Hidden = 16
	train := func(dir string, epochs int, resume bool) {
		c := cfg
		c.Epochs = epochs
		tr, err := New(cpu.New(2), ds, c, Options{RunDir: dir, Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	whole := t.TempDir()
	train(whole, 3, false)
	_, want := metricsEpochs(t, filepath.Join(whole, checkpoint.MetricsFile))

	dir := t.TempDir()
	train(dir, 2, false)
	path := filepath.Join(dir, checkpoint.MetricsFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"epoch":3,"steps":10,"loss":99}` + "\n" + `{"epoch":4,"ste`)
	f.Close()
	train(dir, 3, true)
	epochs, losses := metricsEpochs(t, path)
	if !slices.Equal(epochs, []int{1, 2, 3}) || !slices.Equal(losses, want) {
		t.Fatalf("metrics.jsonl after resume: epochs %v losses %v; want [1 2 3] and %v", epochs, losses, want)
	}
}
