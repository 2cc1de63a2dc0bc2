package link

import (
	"math"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/export"
)

// TestBestModelOutputs: the best model, loaded back, embeds and scores
// the test pairs to the summary's test ROC-AUC; the decoder's state dict,
// applied as torch.nn.Sequential would, gives its scores; the encoder
// exports under PyTorch Geometric's names.
func TestBestModelOutputs(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery = 4, 2
	tr, s, emb := bestEmbeddings(t, ds, cfg)
	l := ds.Link
	pos, err := tr.ScorePairs(emb, l.Test)
	if err != nil {
		t.Fatal(err)
	}
	neg, err := tr.ScorePairs(emb, l.TestNeg)
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
	if got := Score(widen(pos), widen(neg), l.Negatives); math.Abs(got.AUC-s.Test.AUC) > 1e-3 {
		t.Errorf("test ROC-AUC from the best model's scores %.6f, summary %.6f (epoch %d)", got.AUC, s.Test.AUC, s.BestEpoch)
	}
	if _, err := tr.ScorePairs(emb, []int32{0, int32(ds.Graph.NumNodes)}); err == nil || !strings.Contains(err.Error(), "pair 0") {
		t.Errorf("a pair out of range: %v", err)
	}

	dec, err := tr.DecoderTensors()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]export.Tensor{}
	for _, x := range dec {
		byName[x.Name] = x
	}
	w1, b1, w2, b2 := byName["0.weight"], byName["0.bias"], byName["2.weight"], byName["2.bias"]
	width, dim := w1.Shape[0], w1.Shape[1]
	u, v := int(l.Test[0]), int(l.Test[1])
	out := float64(b2.Data[0])
	for c := range width {
		z := float64(b1.Data[c])
		for j := range dim {
			z += float64(emb[u*dim+j]) * float64(emb[v*dim+j]) * float64(w1.Data[c*dim+j]) // x·Wᵀ, W [out, in]
		}
		out += max(z, 0) * float64(w2.Data[c])
	}
	if math.Abs(out-float64(pos[0])) > 1e-5*math.Max(1, math.Abs(out)) {
		t.Errorf("the state dict scores pair 0 %v, the trainer %v", out, pos[0])
	}
	enc, meta, err := tr.EncoderTensors()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) == 0 || meta == nil || !strings.Contains(enc[0].Name, "lin") {
		t.Errorf("encoder tensors %d, first %q, metadata %v", len(enc), enc[0].Name, meta)
	}
	if dataset.Pairs(l.Test) == 0 {
		t.Fatal("no test edges")
	}
}

// TestPatienceStops: a model that cannot improve (a learning rate far below a weight's rounding) stops
// after --patience evaluations without a better validation ROC-AUC.
func TestPatienceStops(t *testing.T) {
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery, cfg.Patience, cfg.LR = 30, 1, 2, 1e-30
	s, _ := trainLink(t, cpu.New(2), ringData(t, 200), cfg, false)
	if len(s.Epochs) != 3 || s.BestEpoch != 1 {
		t.Errorf("%d epochs, best %d; want 3 (the first best, then 2 without improvement)", len(s.Epochs), s.BestEpoch)
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
		emb, err := inOrder(t, cpu.New(2), ds, cfg).Embeddings()
		if err != nil {
			t.Fatal(err)
		}
		return emb
	}
	all, full, sampled := embed([]int{-1, -1}, false), embed([]int{2, 2}, true), embed([]int{2, 2}, false)
	diff := func(a, b []float32) float64 {
		worst := 0.0
		for i := range a {
			worst = max(worst, math.Abs(float64(a[i])-float64(b[i]))/math.Max(1e-3, math.Abs(float64(a[i]))))
		}
		return worst
	}
	if d := diff(all, full); d > 1e-4 {
		t.Errorf("full-eval embeddings differ from the all-neighbour sampled ones by %.3g relative", d)
	}
	if d := diff(sampled, full); d < 1e-3 {
		t.Errorf("full-eval embeddings are the sampled ones (%.3g apart): --full-eval was not used", d)
	}
}
