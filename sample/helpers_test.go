package sample

import (
	"math/rand/v2"
	"slices"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// randomGraph returns a simple directed graph on n vertices whose rows have
// distinct neighbours and degrees drawn up to maxDeg (skewed: a few rows are
// long).
func randomGraph(seed uint64, n, maxDeg int) *graph.CSR {
	r := rand.New(rand.NewPCG(seed, 17))
	indptr := make([]int64, n+1)
	var indices []int32
	seen := make(map[int32]bool)
	for v := 0; v < n; v++ {
		d := r.IntN(maxDeg/4 + 1)
		if r.IntN(10) == 0 {
			d = r.IntN(maxDeg + 1)
		}
		d = min(d, n)
		clear(seen)
		for len(seen) < d {
			u := int32(r.IntN(n))
			if !seen[u] {
				seen[u] = true
				indices = append(indices, u)
			}
		}
		indptr[v+1] = int64(len(indices))
	}
	return &graph.CSR{NumNodes: int64(n), Indptr: indptr, Indices: indices}
}

// randomIDs returns m vertex ids in [0, n), distinct when distinct is set.
func randomIDs(seed uint64, n, m int, distinct bool) []int32 {
	r := rand.New(rand.NewPCG(seed, 99))
	if distinct {
		p := r.Perm(n)[:m]
		out := make([]int32, m)
		for i, v := range p {
			out[i] = int32(v)
		}
		return out
	}
	out := make([]int32, m)
	for i := range out {
		out[i] = int32(r.IntN(n))
	}
	return out
}

// refSample is a direct, unoptimised transcription of the sampling
// convention for one destination: the oracle the sampler is checked against.
func refSample(row []int32, fanout int, v int32, key rng.Key) []int32 {
	d := len(row)
	if fanout < 0 || fanout >= d {
		return slices.Clone(row)
	}
	var chosen []uint32
	out := []int32{}
	for j := 0; j < fanout; j++ {
		t := uint32(d - fanout + j)
		r := rng.Uniform(key.Word(uint32(v), uint32(j)), t+1)
		if slices.Contains(chosen, r) {
			r = t
		}
		chosen = append(chosen, r)
		out = append(out, row[r])
	}
	return out
}

// refLayer applies refSample to every destination.
func refLayer(g *graph.CSR, dst []int32, fanout int, key rng.Key) (indptr, nbrs []int32) {
	indptr = []int32{0}
	for _, v := range dst {
		nbrs = append(nbrs, refSample(g.Neighbors32(int64(v)), fanout, v, key)...)
		indptr = append(indptr, int32(len(nbrs)))
	}
	return indptr, nbrs
}
