package dataset

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/fanout-gnn/fanout/graph"
)

// checkSymmetric checks that every edge u->v of g has its reverse v->u, as
// many times. It compares two sums over all edges, of h(u, v) and of
// h(v, u) for a 64-bit mixing hash h: equal multisets of edges and reversed
// edges give equal sums, and unequal ones differ with probability about
// 1 - 2^-64. The pass is sequential in memory and parallel over rows; only
// when it fails does a second pass find an edge to name.
func checkSymmetric(g *graph.CSR) error {
	var fwd, rev uint64
	if g.Wide() {
		fwd, rev = edgeSums(g, g.Indices64)
	} else {
		fwd, rev = edgeSums(g, g.Indices)
	}
	if fwd == rev {
		return nil
	}
	var u, v int64
	var missing, found bool
	if g.Wide() {
		u, v, missing, found = asymmetricEdge(g, g.Indices64)
	} else {
		u, v, missing, found = asymmetricEdge(g, g.Indices)
	}
	what := fmt.Sprintf("edge %d->%d has no reverse %d->%d", u, v, v, u)
	switch {
	case !found:
		what = "the edges differ from their reverses"
	case !missing:
		what = fmt.Sprintf("edge %d->%d is stored more often than its reverse %d->%d", u, v, v, u)
	}
	return fileErr(IndicesFile, "%s says symmetric: true, but %s (fix the graph or set symmetric: false)", ManifestFile, what)
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// edgeHash is h(u, v): order matters.
func edgeHash(u, v uint64) uint64 { return mix(mix(u+0x9e3779b97f4a7c15) + v) }

// edgeSums returns the sums of edgeHash(u, v) and edgeHash(v, u) over the
// edges u->v (wrapping).
func edgeSums[T int32 | int64](g *graph.CSR, idx []T) (fwd, rev uint64) {
	n := g.NumNodes
	parts := int64(runtime.GOMAXPROCS(0))
	if int64(len(idx)) < serialBelow {
		parts = 1
	}
	sums := make([][2]uint64, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f, r uint64
			for u := n * p / parts; u < n*(p+1)/parts; u++ {
				for _, v := range idx[g.Indptr[u]:g.Indptr[u+1]] {
					f += edgeHash(uint64(u), uint64(v))
					r += edgeHash(uint64(v), uint64(u))
				}
			}
			sums[p] = [2]uint64{f, r}
		}()
	}
	wg.Wait()
	for _, s := range sums {
		fwd += s[0]
		rev += s[1]
	}
	return fwd, rev
}

// asymmetricEdge finds an edge u->v of a graph that is not symmetric:
// missing says it has no reverse at all, otherwise it is stored more often
// than its reverse. It finds the first vertex whose out- and in-neighbours
// differ (by a per-vertex hash balance), then compares the two lists. found
// is false only after a hash collision, when no vertex differs.
func asymmetricEdge[T int32 | int64](g *graph.CSR, idx []T) (u, v int64, missing, found bool) {
	n := g.NumNodes
	bal := make([]uint64, n) // sum of mix(out-neighbour) minus sum of mix(in-neighbour)
	for a := range n {
		for _, b := range idx[g.Indptr[a]:g.Indptr[a+1]] {
			bal[a] += mix(uint64(b))
			bal[b] -= mix(uint64(a))
		}
	}
	x := int64(slices.IndexFunc(bal, func(s uint64) bool { return s != 0 }))
	if x < 0 {
		return 0, 0, false, false
	}
	out := make([]int64, 0, g.Indptr[x+1]-g.Indptr[x])
	for _, b := range idx[g.Indptr[x]:g.Indptr[x+1]] {
		out = append(out, int64(b))
	}
	var in []int64
	for a := range n {
		for _, b := range idx[g.Indptr[a]:g.Indptr[a+1]] {
			if int64(b) == x {
				in = append(in, a)
			}
		}
	}
	slices.Sort(out)
	slices.Sort(in)
	// Walk both sorted lists to the first difference.
	i, j := 0, 0
	for i < len(out) && j < len(in) && out[i] == in[j] {
		i, j = i+1, j+1
	}
	switch {
	case i == len(out) && j == len(in):
		return 0, 0, false, false
	case j == len(in) || (i < len(out) && out[i] < in[j]):
		// x->out[i] has fewer reverses out[i]->x.
		return x, out[i], !slices.Contains(in, out[i]), true
	default:
		// in[j]->x has fewer reverses x->in[j].
		return in[j], x, !slices.Contains(out, in[j]), true
	}
}
