package link

import (
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
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
func coraConfig(seed uint64) Config {
	c := Defaults()
	c.Model, c.Layers, c.Hidden, c.Embed = "gcn", 2, 128, 64
	c.Fanouts, c.Batch, c.Epochs, c.LR, c.Dropout = []int{-1, -1}, 4600, 200, 0.01, 0
	c.EvalEvery, c.Seed, c.Exclude = 10, seed, ExcludeNone
	return c
}

func TestCoraLinkAUC(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 3 models")
	}
	var sum float64
	for seed := uint64(1); seed <= 3; seed++ {
		s, _ := trainLink(t, cpu.New(2), coraLink(t, seed), coraConfig(seed), false)
		t.Logf("seed %d: test AUC %.4f AP %.4f (valid AUC %.4f at epoch %d; last loss %.4f)", seed, s.Test.AUC, s.Test.AP, s.BestValid.AUC, s.BestEpoch, s.Epochs[len(s.Epochs)-1].Loss)
		sum += s.Test.AUC
	}
	if mean := sum / 3; !(mean >= 0.90) {
		t.Errorf("mean test ROC-AUC %.4f over 3 seeds, want at least 0.90", mean)
	}
}

// trainLink trains cfg on ds with the eager driver, or the replay driver,
// and returns the summary and the learnt tensors.
func trainLink(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config, replay bool) (*Summary, [][]float32) {
	t.Helper()
	tr, err := New(be, ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	return runTrainer(t, tr, replay)
}

// runTrainer trains tr with the eager driver, or the replay driver, and
// returns the summary and the learnt tensors.
func runTrainer(t *testing.T, tr *Trainer, replay bool) (*Summary, [][]float32) {
	t.Helper()
	run := tr.Run
	if replay {
		run = tr.RunReplay
	}
	s, err := run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s, tr.params()
}
