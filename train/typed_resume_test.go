package train

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/checkpoint"
)

// TestTypedResumeReproducesUninterruptedRun: a typed run (rgcn, learned
// author and institution rows) stopped after one epoch and resumed ends
// with the uninterrupted run's figures and every parameter, Adam moment
// and learned row of it bit for bit: the tables are saved and restored with
// the model.
func TestTypedResumeReproducesUninterruptedRun(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rgcn")
	run := func(dir string, epochs int, resume bool) *Summary {
		c := cfg
		c.Epochs = epochs
		tr, err := New(cpu.New(2), ds, c, Options{RunDir: dir, Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		sum, err := tr.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	full, part := t.TempDir(), t.TempDir()
	want := run(full, 3, false)
	run(part, 1, false)
	got := run(part, 3, true)
	if got.BestValid[MetricAcc] != want.BestValid[MetricAcc] || got.Test[MetricAcc] != want.Test[MetricAcc] || got.Epochs != 3 {
		t.Fatalf("resumed run %+v differs from the uninterrupted %+v", got, want)
	}
	a, err := checkpoint.Load(filepath.Join(full, checkpoint.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	b, err := checkpoint.Load(filepath.Join(part, checkpoint.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for i, p := range a.Params {
		if b.Params[i].Name != p.Name {
			t.Fatalf("parameter %d: %s after resume, %s uninterrupted", i, b.Params[i].Name, p.Name)
		}
		if p.Name == "embed.author" || p.Name == "embed.institution" {
			tables++
		}
		for k := range 3 {
			if !slices.Equal(a.Data[i][k], b.Data[i][k]) {
				t.Fatalf("%s (%d of weights, m, v) differs after resume", p.Name, k)
			}
		}
	}
	if tables != 2 {
		t.Errorf("the checkpoint holds %d of the two learned tables", tables)
	}
}
