package link

import (
	"fmt"

	"github.com/fanout-gnn/fanout/train"
)

// headOf is the link task's head of trainer tr.
func headOf(tr *train.Trainer) (*head, error) {
	h, ok := tr.Head().(*head)
	if !ok {
		return nil, fmt.Errorf("link: the trainer's task is %s, not link prediction", tr.Config().TaskName())
	}
	return h, nil
}

// Embeddings is every vertex's embedding from tr's model (row v for vertex
// v, flat) and the embedding width.
func Embeddings(tr *train.Trainer) ([]float32, int, error) {
	h, err := headOf(tr)
	if err != nil {
		return nil, 0, err
	}
	emb, err := tr.Outputs()
	return emb, h.dim, err
}

// ScorePairs scores vertex pairs (flat [pairs, 2]) with tr's decoder from
// every vertex's embedding emb (Embeddings).
func ScorePairs(tr *train.Trainer, emb []float32, pairs []int32) ([]float32, error) {
	h, err := headOf(tr)
	if err != nil {
		return nil, err
	}
	n := int32(h.ds.Graph.NumNodes)
	for i, v := range pairs {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("pair %d has vertex %d, want [0, %d)", i/2, v, n)
		}
	}
	hd := h.dec.host()
	if err := h.be.Sync(); err != nil {
		return nil, err
	}
	out := make([]float32, len(pairs)/2)
	for i, s := range scorePairs(emb, h.dim, hd, pairs) {
		out[i] = float32(s)
	}
	return out, nil
}
