package train

import (
	"context"
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset/rmat"
)

// TestCommunityLabelsEveryModel: on tiny with planted-community labels
// (which every model can read, unlike the preset's neighbour-type labels),
// GCN, GAT and GIN (with batch normalisation, without which GIN's sums do
// not train) each come within 3 points of GraphSAGE's test accuracy after
// 10 epochs on the CPU.
func TestCommunityLabelsEveryModel(t *testing.T) {
	p, err := rmat.Lookup("tiny")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := rmat.Generate(p, rmat.Options{Seed: 1, Threads: 2, Labels: rmat.LabelsCommunity})
	if err != nil {
		t.Fatal(err)
	}
	acc := map[string]float64{}
	for _, model := range []string{"sage", "gcn", "gat", "gin"} {
		cfg := tinyModel(t, model)
		cfg.Epochs = 10
		if model == "gin" {
			cfg.Norm = "batch"
		}
		tr, err := New(cpu.New(2), ds, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			tr.Close()
			t.Fatal(err)
		}
		a, _, err := tr.Evaluate(ds.Test)
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		acc[model] = a
	}
	t.Logf("test accuracy: %v", acc)
	for _, model := range []string{"gcn", "gat", "gin"} {
		if d := acc["sage"] - acc[model]; d > 0.03 || math.IsNaN(acc[model]) {
			t.Errorf("%s: test accuracy %.4f, GraphSAGE's %.4f: more than 3 points below", model, acc[model], acc["sage"])
		}
	}
}
