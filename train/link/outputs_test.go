package link

import (
	"math"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/export"
	"github.com/fanout-gnn/fanout/internal/tolerance"
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
	got, err := ScoreContext(t.Context(), widen(pos), widen(neg), l.Negatives)
	if err != nil {
		t.Fatal(err)
	}
	if err := tolerance.Within(got.AUC, s.Test.AUC, 1, 1e-3); err != nil {
		t.Errorf("test ROC-AUC from the best model's scores against the summary's (epoch %d): %v", s.BestEpoch, err)
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
	if err := tolerance.Within(float64(pos[0]), out, math.Max(1, math.Abs(out)), 1e-5); err != nil {
		t.Errorf("pair 0: the trainer's score against the state dict's: %v", err)
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
	// Relative to each reference value, at least 1e-3: a NaN or an
	// infinity fails both checks.
	if err := tolerance.Close(full, all, 1e-3, 1e-4); err != nil {
		t.Errorf("full-eval embeddings against the all-neighbour sampled ones: %v", err)
	}
	if err := tolerance.Apart(full, sampled, 1e-3, 1e-3); err != nil {
		t.Errorf("full-eval embeddings against the sampled ones (--full-eval was not used?): %v", err)
	}
}
