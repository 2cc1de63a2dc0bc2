package link

import (
	"math"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/train"
)

// TestBestModelOutputs: the best model, loaded back, embeds and scores
// the test pairs to the summary's test ROC-AUC, and a pair out of range is
// an error naming it.
func TestBestModelOutputs(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery = 4, 2
	tr, r, emb := bestEmbeddings(t, ds, cfg)
	l := ds.Link
	pos, err := ScorePairs(tr, emb, l.Test)
	if err != nil {
		t.Fatal(err)
	}
	neg, err := ScorePairs(tr, emb, l.TestNeg)
	if err != nil {
		t.Fatal(err)
	}
	widen := func(s []float32) []float64 {
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = float64(v)
		}
		return out
	}
	got := Score(widen(pos), widen(neg), l.Negatives)
	if want := r.sum.Test[MetricAUC]; !(math.Abs(got.AUC-want) <= 1e-3) {
		t.Errorf("test ROC-AUC from the best model's scores %.6f, summary %.6f (epoch %d)", got.AUC, want, r.sum.BestEpoch)
	}
	if _, err := ScorePairs(tr, emb, []int32{0, int32(ds.Graph.NumNodes)}); err == nil || !strings.Contains(err.Error(), "pair 0") {
		t.Errorf("a pair out of range: %v", err)
	}
}

// TestPatienceStops: a model that cannot improve (a learning rate far
// below a weight's rounding) stops after --patience evaluations without a
// better validation ROC-AUC.
func TestPatienceStops(t *testing.T) {
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery, cfg.Patience, cfg.LR = 30, 1, 2, 1e-30
	r := trainLink(t, cpu.New(2), ringData(t, 200), cfg, train.Eager, train.Options{})
	if len(r.epochs) != 3 || r.sum.BestEpoch != 1 {
		t.Errorf("%d epochs, best %d; want 3 (the first best, then 2 without improvement)", len(r.epochs), r.sum.BestEpoch)
	}
}

// TestFullEvalEmbeddings: layer-wise full-neighbour embeddings
// (--full-eval) equal the sampled ones where sampling takes every
// neighbour, within float32 rounding of the sums' order, and not those of
// sampled neighbourhoods (so the test sees which path ran).
func TestFullEvalEmbeddings(t *testing.T) {
	ds := ringData(t, 300)
	embed := func(fanouts []int, full bool) []float32 {
		cfg := ringConfig()
		cfg.Model, cfg.Fanouts, cfg.FullEval = "gcn", fanouts, full
		emb, _, err := Embeddings(newTrainer(t, cpu.New(2), ds, cfg, train.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		return emb
	}
	all, full, sampled := embed([]int{-1, -1}, false), embed([]int{2, 2}, true), embed([]int{2, 2}, false)
	diff := func(a, b []float32) float64 {
		worst := 0.0
		for i := range a {
			d := math.Abs(float64(a[i])-float64(b[i])) / math.Max(1e-3, math.Abs(float64(a[i])))
			if !(d <= worst) { // NaN counts as the worst
				worst = d
			}
		}
		return worst
	}
	if d := diff(all, full); !(d <= 1e-4) {
		t.Errorf("full-eval embeddings differ from the all-neighbour sampled ones by %.3g relative", d)
	}
	if d := diff(sampled, full); !(d >= 1e-3) {
		t.Errorf("full-eval embeddings are the sampled ones (%.3g apart): --full-eval was not used", d)
	}
}
