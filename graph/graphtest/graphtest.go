// Package graphtest holds what tests of graphs share: a CSR's rows as
// plain slices, to compare with the rows a test expects.
package graphtest

import "github.com/fanout-gnn/fanout/graph"

// Rows lists g's rows, each a copy of its neighbours in stored order; a
// row without neighbours is empty, not nil.
func Rows(g *graph.CSR) [][]int32 {
	out := make([][]int32, g.NumNodes)
	for v := range g.NumNodes {
		out[v] = append([]int32{}, g.Neighbors32(v)...)
	}
	return out
}
