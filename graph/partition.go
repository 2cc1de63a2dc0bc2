package graph

import (
	"cmp"
	"fmt"
	"slices"
)

// partitionPasses is how many times Partition streams the vertices.
const partitionPasses = 4

// Partition assigns every vertex of a narrow graph to one of parts parts
// by restreamed linear deterministic greedy partitioning (Stanton and
// Kliot, KDD 2012; restreaming after Nishimura and Ugander, KDD 2013):
// vertices in id order, each to the part that holds most of its
// neighbours, weighted by the room the part has left, so that the parts
// stay balanced in stored edges plus vertices (each at most 5% over the
// mean) while neighbour lists stay together. The first pass sees only the
// neighbours placed before a vertex; later passes see every neighbour's
// latest part, which repairs the first pass's early guesses. Ties go to
// the least loaded part, then the lowest index. O(passes · (edges +
// vertices · parts)); the result depends only on the graph.
func Partition(g *CSR, parts int) ([]int32, error) {
	if parts < 1 {
		return nil, fmt.Errorf("partition: %d parts", parts)
	}
	if err := g.Narrow(); err != nil {
		return nil, err
	}
	n := g.NumNodes
	owner := make([]int32, n)
	if parts == 1 {
		return owner, nil
	}
	for v := range owner {
		owner[v] = -1
	}
	load := make([]float64, parts)
	capacity := 1.05 * float64(g.NumEdges()+n) / float64(parts)
	hits := make([]int32, parts)
	for range partitionPasses {
		clear(load)
		for v := int64(0); v < n; v++ {
			clear(hits)
			for _, u := range g.Neighbors32(v) {
				if p := owner[u]; p >= 0 {
					hits[p]++
				}
			}
			w := float64(g.Degree(v) + 1)
			best, bestScore := -1, -1.0
			for p := range parts {
				room := 1 - load[p]/capacity
				if load[p]+w > capacity && load[p] > 0 {
					room = 0 // full: only as a last resort
				}
				score := float64(hits[p]) * room
				if best < 0 || score > bestScore || (score == bestScore && load[p] < load[best]) {
					best, bestScore = p, score
				}
			}
			owner[v] = int32(best)
			load[best] += w
		}
	}
	return owner, nil
}

// PartitionStats describe a partition: per part, the vertices it owns and
// their stored edges; the edge cut (the fraction of stored edges whose two
// ends lie in different parts); and the balance (the largest part's edges
// plus vertices over the mean).
type PartitionStats struct {
	Vertices []int64 `json:"vertices"`
	Edges    []int64 `json:"edges"`
	Cut      float64 `json:"edge_cut"`
	Balance  float64 `json:"balance"`
}

// PartitionStats measures the partition owner (a part per vertex) of g.
func (g *CSR) PartitionStats(owner []int32, parts int) PartitionStats {
	st := PartitionStats{Vertices: make([]int64, parts), Edges: make([]int64, parts)}
	var cut int64
	for v := int64(0); v < g.NumNodes; v++ {
		p := owner[v]
		st.Vertices[p]++
		st.Edges[p] += g.Degree(v)
		for _, u := range g.Neighbors32(v) {
			if owner[u] != p {
				cut++
			}
		}
	}
	if e := g.NumEdges(); e > 0 {
		st.Cut = float64(cut) / float64(e)
	}
	var most, total int64
	for p := range parts {
		l := st.Edges[p] + st.Vertices[p]
		most, total = max(most, l), total+l
	}
	if total > 0 {
		st.Balance = float64(most) * float64(parts) / float64(total)
	}
	return st
}

// Replicated is the set of vertices whose neighbour lists every part keeps
// a copy of: the highest-degree vertices, in descending degree (ties by
// id), while their lists fit in budget bytes (4 bytes a neighbour; an
// empty list costs nothing, so a budget for every edge takes every vertex).
func Replicated(g *CSR, budget int64) []int32 {
	if budget <= 0 {
		return nil
	}
	order := DegreeOrder(g)
	var used int64
	for i, v := range order {
		d := g.Degree(int64(v))
		if used+4*d > budget {
			return order[:i]
		}
		used += 4 * d
	}
	return order
}

// DegreeOrder lists g's vertices by degree, highest first (ties by id).
func DegreeOrder(g *CSR) []int32 {
	order := make([]int32, g.NumNodes)
	for v := range order {
		order[v] = int32(v)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(g.Degree(int64(b)), g.Degree(int64(a))), cmp.Compare(a, b))
	})
	return order
}
