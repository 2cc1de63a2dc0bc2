package train

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestTypedEmbeddings: after training, every type's last hidden rows come
// out per type: the target's equal the rows its evaluation computes for
// the same seeds bit for bit (the same samples), an author's are finite,
// not all alike, and the same when asked again; the training plan trains
// on afterwards.
func TestTypedEmbeddings(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cfg.Epochs = 2
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	paper, author := ds.TypeIndex("paper"), ds.TypeIndex("author")
	emb, dim, err := tr.TypedEmbeddings(paper)
	if err != nil {
		t.Fatal(err)
	}
	if dim != cfg.Hidden || len(emb) != int(ds.Types[paper].Count)*dim {
		t.Fatalf("papers' embeddings: %d values of width %d", len(emb), dim)
	}
	// The evaluation plan's forward pass over the first batch of papers.
	p := tr.eval
	seeds := make([]int32, cfg.Batch)
	for i := range seeds {
		seeds[i] = int32(i)
	}
	p.SetBatch(seeds, 0, 0)
	p.Sample(tr.in, cfg.Seed^evalSeedMix)
	p.GatherRows(tr.in)
	tr.model.Forward(p.NNBatch(tr.in), false, backend.Rand{Seed: cfg.Seed, Clock: p.Clock})
	want := make([]float32, cfg.Batch*dim)
	tr.be.Read(want, tr.model.TypedOutput(cfg.Layers-2, paper), 0)
	if err := tr.sync(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(emb[:len(want)], want) {
		t.Fatal("the papers' embeddings differ from their evaluation's hidden rows")
	}
	a, _, err := tr.TypedEmbeddings(author)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := tr.TypedEmbeddings(author)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, again) {
		t.Error("the authors' embeddings differ when asked twice")
	}
	distinct := map[float32]bool{}
	for _, v := range a {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("an author's embedding holds %v", v)
		}
		distinct[v] = true
	}
	if len(distinct) < len(a)/10 {
		t.Errorf("the authors' embeddings hold %d distinct values of %d", len(distinct), len(a))
	}
	if _, _, err := tr.TypedEmbeddings(ds.TypeIndex("institution")); err != nil {
		t.Errorf("institutions: %v", err)
	}
	cfg.Epochs = 3
	tr.cfg.Epochs = 3
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatalf("training after the embeddings: %v", err)
	}
}
