package link

import (
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// coraLink is Planetoid Cora with its edges split 0.85/0.05/0.1 with seed.
func coraLink(t *testing.T, seed uint64) *dataset.Dataset {
	t.Helper()
	ds := traintest.Cora(t, filepath.Join("..", ".."))
	if err := linksplit.Apply(ds, linksplit.Options{Fractions: linksplit.Fractions{Train: 0.85, Valid: 0.05, Test: 0.1}, Negatives: 1, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	return ds
}

// coraConfig is a two-layer GCN with the dot decoder, trained on all of a
// split's training edges per step, which are also its message-passing
// graph (as PyTorch Geometric's link-prediction example trains, full
// batch: excluding the batch's edges would leave no graph at all).
func coraConfig(seed uint64) train.Config {
	c := train.Defaults()
	c.Task, c.Link = train.TaskLink, train.LinkDefaults()
	c.Model, c.Layers, c.Hidden, c.Link.Embed = "gcn", 2, 128, 64
	c.Fanouts, c.Batch, c.Epochs, c.LR, c.Dropout = []int{-1, -1}, 4600, 200, 0.01, 0
	c.EvalEvery, c.Seed, c.Link.Exclude = 10, seed, train.ExcludeNone
	return c
}

func TestCoraLinkAUC(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 3 models")
	}
	var sum float64
	for seed := uint64(1); seed <= 3; seed++ {
		r := trainLink(t, cpu.New(2), coraLink(t, seed), coraConfig(seed), train.Eager, train.Options{})
		s := r.sum
		t.Logf("seed %d: test AUC %.4f AP %.4f (valid AUC %.4f at epoch %d; last loss %.4f)", seed, s.Test[MetricAUC], s.Test[MetricAP], s.BestValid[MetricAUC], s.BestEpoch, r.epochs[len(r.epochs)-1].Loss)
		sum += s.Test[MetricAUC]
	}
	if mean := sum / 3; !(mean >= 0.90) {
		t.Errorf("mean test ROC-AUC %.4f over 3 seeds, want at least 0.90", mean)
	}
}
