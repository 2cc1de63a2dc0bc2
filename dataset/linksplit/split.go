// Package linksplit makes a link-prediction task of a dataset: its
// undirected edges split at random into training, validation and test
// sets (as PyTorch Geometric's RandomLinkSplit does), the held-out edges
// removed from the message-passing graph, and fixed evaluation negatives
// drawn for every held-out edge. Every draw is a Philox word keyed by the
// seed, so a split is the same on every machine.
package linksplit

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/rng"
)

// Philox streams of the split: the edges' order and the negatives.
const (
	shuffleStream  = 252
	negativeStream = 253
)

// maxTries bounds the draws for one negative: a source adjacent to almost
// every vertex has no room for negatives.
const maxTries = 1 << 12

// Fractions are the shares of the undirected edges in each set.
type Fractions struct {
	Train, Valid, Test float64
}

// Parse reads TRAIN,VALID,TEST fractions ("0.85,0.05,0.1"): each in
// [0, 1], the training share above 0, summing to 1 (within 1e-6).
func Parse(s string) (Fractions, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return Fractions{}, fmt.Errorf("link split %s: want TRAIN,VALID,TEST fractions, e.g. 0.85,0.05,0.1", quote.Quote(s))
	}
	var v [3]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return Fractions{}, fmt.Errorf("link split %s: fraction %d is %s, want a number in [0, 1]", quote.Quote(s), i+1, quote.Quote(p))
		}
		v[i] = f
	}
	f := Fractions{v[0], v[1], v[2]}
	if f.Train == 0 {
		return Fractions{}, fmt.Errorf("link split %s: the training fraction is 0", quote.Quote(s))
	}
	if sum := v[0] + v[1] + v[2]; math.Abs(sum-1) > 1e-6 {
		return Fractions{}, fmt.Errorf("link split %s: the fractions sum to %g, want 1", quote.Quote(s), sum)
	}
	return f, nil
}

// Options configure Apply.
type Options struct {
	Fractions
	// Negatives is the number of fixed negatives per held-out edge (1 for
	// ROC-AUC and average precision; ranking metrics want more).
	Negatives int
	Seed      uint64
}

// Apply splits d's undirected edges (d must be symmetric, with int32
// indices): the shuffled edges' first Valid·m go to validation, the next
// Test·m to test (each count rounded down, as RandomLinkSplit does), the
// rest to training; the graph keeps the training edges only (both
// directions) and d.Link holds the sets and the fixed negatives. A
// negative of held-out edge (u, v) is (u, w) with w drawn uniformly among
// the vertices that are neither u nor a neighbour of u in the original
// graph. A typed dataset is refused.
func Apply(d *dataset.Dataset, o Options) error {
	g := d.Graph
	if d.Typed() {
		return fmt.Errorf("link split: %s is a typed dataset: link prediction over its relations is not built yet", d.Name)
	}
	if !d.Symmetric {
		return fmt.Errorf("link split: %s is not symmetric: the split takes undirected edges", d.Name)
	}
	if err := g.Narrow(); err != nil {
		return fmt.Errorf("link split: %w", err)
	}
	if o.Negatives < 1 {
		return fmt.Errorf("link split: %d negatives per held-out edge, want at least 1", o.Negatives)
	}
	src, dst := undirected(g)
	m := len(src)
	if m == 0 {
		return fmt.Errorf("link split: %s has no edges", d.Name)
	}
	order := shuffled(m, o.Seed)
	nValid, nTest := int(o.Valid*float64(m)), int(o.Test*float64(m))
	if nValid+nTest >= m {
		return fmt.Errorf("link split: %d validation and %d test edges of %d leave none to train on", nValid, nTest, m)
	}
	pairs := func(ids []int) []int32 {
		p := make([]int32, 0, 2*len(ids))
		for _, e := range ids {
			p = append(p, src[e], dst[e])
		}
		return p
	}
	s := &dataset.LinkSplit{
		Valid:     pairs(order[:nValid]),
		Test:      pairs(order[nValid : nValid+nTest]),
		Negatives: o.Negatives,
	}
	train := slices.Clone(order[nValid+nTest:])
	slices.Sort(train) // the training edges in the graph's order
	s.Train = pairs(train)
	var err error
	if s.ValidNeg, err = negatives(g, s.Valid, 0, o); err != nil {
		return err
	}
	if s.TestNeg, err = negatives(g, s.Test, nValid, o); err != nil {
		return err
	}
	ts, td := make([]int32, len(train)), make([]int32, len(train))
	for i, e := range train {
		ts[i], td[i] = src[e], dst[e]
	}
	mp, err := graph.FromEdges(g.NumNodes, ts, td, graph.BuildOptions{Symmetrize: true, Dedup: true})
	if err != nil {
		return fmt.Errorf("link split: the training graph: %w", err)
	}
	d.Graph, d.Link = mp, s
	d.Preprocessing = append(d.Preprocessing, fmt.Sprintf("link-split %g,%g,%g seed %d", o.Train, o.Valid, o.Test, o.Seed))
	return nil
}

// undirected lists g's edges u < v once each (self loops dropped), in row
// order.
func undirected(g *graph.CSR) (src, dst []int32) {
	for u := int64(0); u < g.NumNodes; u++ {
		for _, v := range g.Neighbors32(u) {
			if int64(v) > u {
				src, dst = append(src, int32(u)), append(dst, v)
			}
		}
	}
	return src, dst
}

// shuffled is a permutation of [0, m): edges ordered by a Philox word
// each, ties by index (a stable radix sort of the words, which start in
// index order: a comparison sort of products-sim's 57 million edges took
// most of the split).
func shuffled(m int, seed uint64) []int {
	k := rng.Key{Seed: seed, Stream: shuffleStream}
	keys := make([]keyed, m)
	for e := range keys {
		w := k.Words(uint32(e), 0)
		keys[e] = keyed{uint64(w[0])<<32 | uint64(w[1]), e}
	}
	keys = radixSort(keys)
	order := make([]int, m)
	for i, x := range keys {
		order[i] = x.e
	}
	return order
}

// keyed is an edge with its sort key.
type keyed struct {
	key uint64
	e   int
}

// radixSort sorts a by key, stably: four passes of 16 bits, least
// significant first, between a and a buffer of its size.
func radixSort(a []keyed) []keyed {
	b := make([]keyed, len(a))
	count := make([]int, 1<<16)
	for shift := 0; shift < 64; shift += 16 {
		clear(count)
		for _, x := range a {
			count[x.key>>shift&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i], sum = sum, sum+c
		}
		for _, x := range a {
			d := x.key >> shift & 0xffff
			b[count[d]] = x
			count[d]++
		}
		a, b = b, a
	}
	return a
}

// negatives draws o.Negatives negatives for each positive of pos (flat
// pairs); base offsets the positives' Philox indices so that validation
// and test draw apart.
func negatives(g *graph.CSR, pos []int32, base int, o Options) ([]int32, error) {
	k := rng.Key{Seed: o.Seed, Stream: negativeStream}
	n := uint32(g.NumNodes)
	has := dataset.EdgeFinder(g)
	out := make([]int32, 0, len(pos)*o.Negatives)
	for i := 0; i < dataset.Pairs(pos); i++ {
		u := pos[2*i]
		draw := uint32(0)
		for j := 0; j < o.Negatives; j++ {
			for tries := 0; ; tries++ {
				if tries == maxTries {
					return nil, fmt.Errorf("link split: no negative for vertex %d found in %d draws: it is adjacent to almost every vertex", u, maxTries)
				}
				w := int32(rng.Uniform(k.Word(uint32(base+i), draw), n))
				draw++
				if w != u && !has(u, w) {
					out = append(out, u, w)
					break
				}
			}
		}
	}
	return out, nil
}
