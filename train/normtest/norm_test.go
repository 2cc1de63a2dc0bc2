// Package normtest trains whole models with normalisation and jumping
// knowledge, apart from package train's tests so that their time counts
// against a package of their own: batch normalisation keeps GIN's sums at
// tiny's hubs bounded, and the normalised models learn Cora.
package normtest

import (
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// epochLosses trains cfg on ds on the CPU and returns every epoch's mean
// training loss and the run's summary.
func epochLosses(t *testing.T, ds *dataset.Dataset, cfg train.Config) ([]float64, *train.Summary) {
	t.Helper()
	sums := make([]float64, cfg.Epochs)
	steps := make([]int, cfg.Epochs)
	record := func(epoch, _ int, loss float32) {
		sums[epoch] += float64(loss)
		steps[epoch]++
	}
	s := traintest.Run(t, ds, cfg, train.Options{OnStep: record})
	for e := range sums {
		sums[e] /= float64(max(steps[e], 1))
	}
	return sums, s
}

// TestBatchNormBoundsGINSums: GIN on tiny at its default rate sums
// thousands of neighbours at the hubs, and its first epoch's loss is
// hundreds of times an uninformed model's; with batch normalisation every
// epoch's loss stays near an uninformed model's or below.
func TestBatchNormBoundsGINSums(t *testing.T) {
	ds, cfg := traintest.Tiny(t)
	cfg.Model, cfg.Epochs = "gin", 3
	uninformed := math.Log(float64(ds.NumClasses))
	plain, _ := epochLosses(t, ds, cfg)
	cfg.Norm = "batch"
	normed, _ := epochLosses(t, ds, cfg)
	t.Logf("epoch losses: %v without normalisation, %v with batch normalisation (uninformed %.3f)", plain, normed, uninformed)
	if !(plain[0] > 100*uninformed) {
		t.Errorf("without normalisation the first epoch's loss is %v: the hubs' sums no longer blow up, so this test shows nothing", plain[0])
	}
	for e, l := range normed {
		if !(l < 1.25*uninformed) {
			t.Errorf("epoch %d with batch normalisation: loss %v, want below 1.25 × %.3f", e+1, l, uninformed)
		}
	}
}

// TestCoraNormalisedModelsLearn: GCN, GraphSAGE and GIN with batch or
// layer normalisation, and GCN with jumping knowledge, learn Cora (seed 1,
// 100 epochs): far above the 0.32 of its largest class, within reach of
// the models without them (docs/perf.md has the 5-seed figures at 200).
func TestCoraNormalisedModelsLearn(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 6 models")
	}
	ds := traintest.Cora(t, "../..")
	base := map[string]train.Config{
		"gcn": {Model: "gcn", Layers: 2, Hidden: 16, Fanouts: []int{-1, -1}, Batch: 1024, Epochs: 200,
			LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5, Seed: 1, EvalEvery: 1},
		"sage": {Model: "sage", Layers: 2, Hidden: 16, Fanouts: []int{10, 10}, Batch: 1024, Epochs: 200,
			LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5, InDropout: 0.5, Seed: 1, EvalEvery: 1},
		"gin": {Model: "gin", Layers: 2, Hidden: 64, Fanouts: []int{-1, -1}, Batch: 140, Epochs: 200,
			LR: 0.005, WeightDecay: 5e-4, Dropout: 0.5, InDropout: 0.5, Seed: 1, EvalEvery: 1},
	}
	for _, c := range []struct {
		model, norm, jk string
		least           float64
	}{
		{"gcn", "batch", "", 0.72}, {"gcn", "layer", "", 0.72}, {"gcn", "", "cat", 0.76},
		{"sage", "batch", "", 0.72}, {"gin", "batch", "", 0.66}, {"gin", "layer", "", 0.72},
	} {
		cfg := base[c.model]
		cfg.Norm, cfg.JK, cfg.Epochs = c.norm, c.jk, 100
		s := traintest.Run(t, ds, cfg, train.Options{})
		t.Logf("%s norm %q jk %q: test accuracy %.4f", c.model, c.norm, c.jk, s.TestAcc)
		if !(s.TestAcc >= c.least) {
			t.Errorf("%s norm %q jk %q: test accuracy %.4f, want at least %.2f", c.model, c.norm, c.jk, s.TestAcc, c.least)
		}
	}
}
