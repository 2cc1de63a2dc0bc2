package sample

import (
	"sort"

	"github.com/fanout-gnn/fanout/rng"
)

// Negative is the vertex that a negative draw's word w gives (link
// prediction, backend.Link's EdgeSeeds): uniform over nodes, or, where
// dist is set (I32 [nodes+1] cumulative degrees: dist[0] = 0,
// dist[v+1]-dist[v] = v's degree), the v with dist[v] <= Uniform(w,
// dist[nodes]) < dist[v+1], drawn in proportion to its degree.
func Negative(w uint32, nodes int, dist []int32) int32 {
	if dist == nil {
		return int32(rng.Uniform(w, uint32(nodes)))
	}
	t := int32(rng.Uniform(w, uint32(dist[nodes])))
	// The first v whose next boundary lies past t: dist[v] <= t < dist[v+1].
	return int32(sort.Search(nodes, func(v int) bool { return dist[v+1] > t }))
}

// SharedNegatives writes the negatives that one step shares (len(out) of
// them, at most nodes; backend.NegShared) from the words of index's
// sequence under key, distinct vertices in the order drawn:
//   - uniform (dist nil): Robert Floyd's sampling of len(out) of the nodes
//     vertices, as a row's neighbours are sampled (package doc, with the
//     vertex ids as the row): draw j takes r = Uniform(word j, t+1) for
//     t = nodes-len(out)+j, or t where r was taken before;
//   - by degree: draw a takes Negative(word a, nodes, dist) unless an
//     earlier draw took that vertex; from draw budget on, every draw is
//     taken (a repeat only where the first budget draws found fewer than
//     len(out) vertices: a few vertices holding nearly all the degree).
func SharedNegatives(key rng.Key, index uint32, nodes int, dist []int32, budget int, out []int32) {
	var set posSet
	set.reset(len(out))
	if dist == nil {
		t := uint32(nodes - len(out))
		for j := range out {
			r := rng.Uniform(key.Word(index, uint32(j)), t+1)
			if !set.insert(r) {
				r = t
				set.insert(r)
			}
			out[j] = int32(r)
			t++
		}
		return
	}
	for a, n := 0, 0; n < len(out); a++ {
		v := Negative(key.Word(index, uint32(a)), nodes, dist)
		if set.insert(uint32(v)) || a >= budget {
			out[n] = v
			n++
		}
	}
}
