package link

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/train"
)

// evalStream is the Philox stream of the negatives drawn at evaluation
// (LinkConfig.EvalNegatives); see task.go for the others.
const evalStream = 254

// maxScored bounds the pairs that one held-out set's evaluation scores:
// the metrics sort them, about 32 bytes of host memory each.
const maxScored = 1 << 27

// heldOut is a held-out set as the run evaluates it: its positives (flat
// pairs) and k negatives per positive.
type heldOut struct {
	pos, neg []int32
	k        int
	// degreeMRR is the MRR that scoring pairs by their ends' degrees in
	// the training graph gives (MetricMRRDegree).
	degreeMRR float64
}

// heldOutSet is a held-out set as the settings evaluate it, made once: the
// first EvalEdges positives, against their stored negatives or
// EvalNegatives drawn ones.
func (t *head) heldOutSet(set train.Split) (heldOut, error) {
	if h := t.sets[set]; h != nil {
		return *h, nil
	}
	l := t.ds.Link
	pos, neg := l.Valid, l.ValidNeg
	if set == train.Test {
		pos, neg = l.Test, l.TestNeg
	}
	n := t.evalEdges(pos)
	h := heldOut{pos: pos[:2*n], k: l.Negatives}
	if k := t.cfg.EvalNegatives; k > 0 {
		h.k = k
		var err error
		if h.neg, err = drawNegatives(h.pos, k, t.ds.Graph.NumNodes, rng.Key{Seed: t.seed, Stream: evalStream}, int(set)); err != nil {
			return h, err
		}
	} else {
		h.neg = neg[:2*n*h.k]
	}
	h.degreeMRR = degreeMRR(t.ds, h)
	t.sets[set] = &h
	return h, nil
}

// evalSet is heldOutSet, refusing a set without edges.
func (t *head) evalSet(set train.Split) (heldOut, error) {
	h, err := t.heldOutSet(set)
	if err == nil && dataset.Pairs(h.pos) == 0 {
		err = fmt.Errorf("link: the %s set has no edges to evaluate", set)
	}
	return h, err
}

// evalEdges is how many of the held-out edges pos the settings score.
func (t *head) evalEdges(pos []int32) int {
	n := dataset.Pairs(pos)
	if c := t.cfg.EvalEdges; c > 0 {
		n = min(n, c)
	}
	return n
}

// checkEvalSize refuses, before any training, settings whose evaluation
// would score more than maxScored pairs of one held-out set.
func (t *head) checkEvalSize() error {
	k := t.cfg.EvalNegatives
	if k == 0 {
		k = t.ds.Link.Negatives
	}
	for _, s := range []struct {
		name string
		pos  []int32
	}{{"validation", t.ds.Link.Valid}, {"test", t.ds.Link.Test}} {
		if n := t.evalEdges(s.pos); n*k > maxScored {
			return fmt.Errorf("link: evaluating %d %s edges x %d negatives scores %d pairs, more than %d: give --eval-edges at most %d", n, s.name, k, n*k, maxScored, maxScored/k)
		}
	}
	return nil
}

// drawNegatives draws k negatives (u, w) for every positive (u, v) of pos,
// w uniform over the vertices other than u, as ogbl-citation2's random
// destinations (a negative may be an edge of the graph, as there). Draw j
// of positive i of set s is Philox word j of index 2i+s, so validation
// and test draw apart, and every evaluation of a run ranks against the
// same negatives.
func drawNegatives(pos []int32, k int, vertices int64, key rng.Key, set int) ([]int32, error) {
	if vertices < 2 || vertices > 1<<31 {
		return nil, fmt.Errorf("link: negatives need 2 to 2^31 vertices, the graph has %d", vertices)
	}
	m := uint32(vertices - 1)
	out := make([]int32, 2*k*dataset.Pairs(pos))
	for i := range dataset.Pairs(pos) {
		u := pos[2*i]
		for j := range k {
			w := int32(rng.Uniform(key.Word(uint32(2*i+set), uint32(j)), m))
			if w >= u {
				w++ // skip u itself
			}
			o := 2 * (i*k + j)
			out[o], out[o+1] = u, w
		}
	}
	return out, nil
}

// scorePairs scores the flat pairs p from the embeddings, on every core.
func scorePairs(emb []float32, dim int, hd *hostDecoder, p []int32) []float64 {
	out := make([]float64, dataset.Pairs(p))
	row := func(v int32) []float32 { return emb[int(v)*dim : (int(v)+1)*dim] }
	workers := min(runtime.GOMAXPROCS(0), max(len(out)/4096, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * len(out) / workers; i < (w+1)*len(out)/workers; i++ {
				out[i] = hd.score(row(p[2*i]), row(p[2*i+1]))
			}
		}()
	}
	wg.Wait()
	return out
}

// degreeMRR is the MRR of h's positives among their own negatives when a
// pair (u, v) scores deg(u)·deg(v) in ds's graph (the training edges).
func degreeMRR(ds *dataset.Dataset, h heldOut) float64 {
	score := func(p []int32) []float64 {
		out := make([]float64, dataset.Pairs(p))
		for i := range out {
			out[i] = float64(ds.Graph.Degree(int64(p[2*i]))) * float64(ds.Graph.Degree(int64(p[2*i+1])))
		}
		return out
	}
	pos := score(h.pos)
	own, _ := ownRanks(context.Background(), pos, score(h.neg), h.k)
	return rankStats{own: own, nPos: len(pos)}.reciprocalRank()
}
