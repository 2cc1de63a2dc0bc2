package train

import (
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
)

// typedEnvelope is the envelope no typed batch of batch seeds (of type
// seedType: the target, or the type whose embeddings are asked) can
// exceed, bottom first: per hop, a relation's edges are
// its destination type's destinations times its fanout (at most the
// relation's largest degree; all of them for a negative fanout), at most
// its edges; a type's sources are its destinations and the edges of the
// relations out of it, at most its vertices. Every relation keeps at
// least one edge's room, so every block is a real allocation.
func typedEnvelope(ds *dataset.Dataset, batch int, fanouts [][]int, seedType int) []nn.LayerCaps {
	L, T, R := len(fanouts), len(ds.Types), len(ds.Relations)
	maxDeg := make([]int64, R)
	for r, rel := range ds.Relations {
		g := rel.Graph
		for v := 1; v < len(g.Indptr); v++ {
			maxDeg[r] = max(maxDeg[r], g.Indptr[v]-g.Indptr[v-1])
		}
	}
	caps := make([]nn.LayerCaps, L)
	dst := make([]int64, T)
	dst[seedType] = int64(batch) // the plan's seed capacity, even past the type's vertices
	for h := range L {
		l := L - 1 - h
		c := nn.LayerCaps{Types: make([]nn.TypeCaps, T), Edges: make([]int, R)}
		src := append([]int64(nil), dst...)
		for r, rel := range ds.Relations {
			k := maxDeg[r]
			if f := fanouts[h][r]; f >= 0 {
				k = min(int64(f), k)
			}
			e := min(dst[rel.Dst]*k, rel.Graph.NumEdges())
			c.Edges[r] = int(max(e, 1))
			src[rel.Src] += e
		}
		for t := range T {
			src[t] = max(dst[t], min(src[t], ds.Types[t].Count))
			c.Types[t] = nn.TypeCaps{Dst: int(dst[t]), Src: int(src[t])}
		}
		caps[l] = c
		dst = src
	}
	return caps
}
