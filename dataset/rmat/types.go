package rmat

import (
	"cmp"
	"slices"

	"github.com/fanout-gnn/fanout/graph"
)

// coreFraction is the share of non-isolated vertices, highest degree first,
// whose types are dealt for balance instead of drawn at random.
const coreFraction = 0.01

// coreVertices returns the non-isolated vertices of highest degree, at most
// frac of them (all vertices of a degree are in or out together), sorted by
// degree descending, then id ascending.
func coreVertices(g *graph.CSR, frac float64) []int64 {
	var nonIsolated, maxDeg int64
	for v := range g.NumNodes {
		d := g.Degree(v)
		if d > 0 {
			nonIsolated++
		}
		maxDeg = max(maxDeg, d)
	}
	want := int64(frac * float64(nonIsolated))
	hist := make([]int64, maxDeg+1)
	for v := range g.NumNodes {
		hist[g.Degree(v)]++
	}
	// lowest threshold t >= 1 with count(degree >= t) <= want
	t, above := maxDeg+1, int64(0)
	for t > 1 && above+hist[t-1] <= want {
		t--
		above += hist[t]
	}
	core := make([]int64, 0, above)
	for v := range g.NumNodes {
		if g.Degree(v) >= t {
			core = append(core, v)
		}
	}
	slices.SortFunc(core, func(a, b int64) int {
		return cmp.Or(cmp.Compare(g.Degree(b), g.Degree(a)), cmp.Compare(a, b))
	})
	return core
}

// plantTypes returns [NumNodes] latent types in [0, classes). The core
// vertices (coreVertices) are dealt one by one, highest degree first, to the
// type whose core vertices have the least total degree so far (lowest type
// on ties), so that no type owns most of the hubs; every other vertex draws
// its type uniformly from a generator keyed by its id.
func plantTypes(g *graph.CSR, classes int, seed uint64) []int32 {
	types := make([]int32, g.NumNodes)
	for v := range types {
		types[v] = int32(below(key(seed, streamTypes, uint64(v)), uint64(classes)))
	}
	load := make([]int64, classes)
	for _, v := range coreVertices(g, coreFraction) {
		k := 0
		for j := range load {
			if load[j] < load[k] {
				k = j
			}
		}
		types[v] = int32(k)
		load[k] += g.Degree(v)
	}
	return types
}
