package sample

import "github.com/fanout-gnn/fanout/graph"

// Caps are static capacities for one block: destinations, sampled edges and
// sources (destinations included).
type Caps struct {
	Dst, Edges, Src int
}

// Envelope returns conservative capacities for every block of a batch of
// `batch` distinct seeds, indexed like MiniBatch.Blocks (bottom first). With
// N vertices, E edges and Δ the maximum degree, hop h (from the seeds) has
//
//	Dst_0   = min(N, batch)
//	k_h     = min(fanouts[h], Δ), or Δ for fanout -1
//	Edges_h = min(E, Dst_h·k_h)
//	Src_h   = min(N, Dst_h + Edges_h)
//	Dst_h+1 = Src_h
//
// so every sampled batch fits (a destination samples at most min(deg, k)
// distinct positions and a source is a destination or a sampled edge's end).
// Δ is not capped at N: a multigraph's row may hold a vertex twice.
func Envelope(g *graph.CSR, batch int, fanouts []int) []Caps {
	n := max(g.NumNodes, 0)
	e := max(g.NumEdges(), 0)
	maxDeg := maxDegree(g)
	caps := make([]Caps, len(fanouts))
	dst := min(n, int64(max(batch, 0)))
	for h, f := range fanouts {
		k := maxDeg
		if f >= 0 {
			k = min(int64(f), maxDeg)
		}
		edges := e
		if k == 0 || dst <= e/k { // dst·k <= E, so the product cannot overflow
			edges = dst * k
		}
		src := min(n, dst+edges)
		caps[len(fanouts)-1-h] = Caps{Dst: int(dst), Edges: int(edges), Src: int(src)}
		dst = src
	}
	return caps
}

// maxDegree is the largest row length of g (0 for an empty graph).
func maxDegree(g *graph.CSR) int64 {
	var m int64
	for v := 1; v < len(g.Indptr); v++ {
		m = max(m, g.Indptr[v]-g.Indptr[v-1])
	}
	return m
}
