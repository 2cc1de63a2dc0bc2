package link

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// ringData is a symmetric graph of n vertices (a ring, chords and a hub
// joined to every tenth vertex) with 8 random features each, its edges
// split 0.8/0.1/0.1 with 2 fixed negatives per held-out edge.
func ringData(t *testing.T, n int32) *dataset.Dataset {
	t.Helper()
	var src, dst []int32
	for i := int32(0); i < n; i++ {
		src = append(src, i, i)
		dst = append(dst, (i+1)%n, (i*7+3)%n)
		if i%10 == 0 {
			src, dst = append(src, 0), append(dst, i)
		}
	}
	g, err := graph.FromEdges(int64(n), src, dst, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	const dim = 8
	feat := make([]float32, int(n)*dim)
	rng.Key{Seed: 3}.FillUniform(feat, dim, -1, 1)
	ds := &dataset.Dataset{Name: "ring", Graph: g, Symmetric: true, Features: feat, FeatDim: dim,
		Labels: make([]int32, n), NumClasses: 1, Train: []int64{0}}
	if err := linksplit.Apply(ds, linksplit.Options{Fractions: linksplit.Fractions{Train: 0.8, Valid: 0.1, Test: 0.1}, Negatives: 2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	return ds
}

// ringConfig exercises every part of the step: GraphSAGE with dropout,
// two negatives by degree, the MLP decoder, reverses excluded.
func ringConfig() Config {
	c := Defaults()
	c.Model, c.Layers, c.Hidden, c.Embed = "sage", 2, 16, 8
	c.Fanouts, c.Batch, c.Epochs, c.LR, c.Dropout = []int{4, 3}, 64, 2, 0.01, 0.3
	c.Negatives, c.NegativeDist, c.Decoder, c.DecoderWidth = 2, DistDegree, DecoderMLP, 6
	return c
}

// inOrder is a trainer (closed at the end of the test) whose epoch order
// is the training edges' own, for tests that issue steps themselves.
func inOrder(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config) *Trainer {
	t.Helper()
	tr, err := New(be, ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	edges := make([]int32, dataset.Pairs(ds.Link.Train))
	for i := range edges {
		edges[i] = int32(i)
	}
	tr.be.Write(tr.perm, 0, edges)
	return tr
}

// bestEmbeddings trains cfg on ds with the eager driver on a CPU backend
// and returns the trainer (closed at the end of the test), its summary
// and every vertex's embedding from its best model.
func bestEmbeddings(t *testing.T, ds *dataset.Dataset, cfg Config) (*Trainer, *Summary, []float32) {
	t.Helper()
	tr, err := New(cpu.New(2), ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	s, err := tr.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.UseBest(); err != nil {
		t.Fatal(err)
	}
	emb, err := tr.Embeddings()
	if err != nil {
		t.Fatal(err)
	}
	return tr, s, emb
}
