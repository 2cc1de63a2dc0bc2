package dataset

import (
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

// TestEdgeFinder: the binary search over sorted rows and the scan over
// unsorted ones answer as HasEdge does, for every pair.
func TestEdgeFinder(t *testing.T) {
	sorted := &graph.CSR{NumNodes: 4, Indptr: []int64{0, 2, 2, 5, 6}, Indices: []int32{1, 3, 0, 1, 3, 2}}
	unsorted := &graph.CSR{NumNodes: 4, Indptr: []int64{0, 2, 2, 5, 6}, Indices: []int32{3, 1, 3, 0, 1, 2}}
	for _, g := range []*graph.CSR{sorted, unsorted} {
		has := EdgeFinder(g)
		edges := 0
		for u := range int32(4) {
			for v := range int32(4) {
				if has(u, v) != HasEdge(g, u, v) {
					t.Errorf("(%d, %d): EdgeFinder %v, HasEdge %v", u, v, has(u, v), HasEdge(g, u, v))
				}
				if has(u, v) {
					edges++
				}
			}
		}
		if edges != 6 {
			t.Errorf("found %d edges, want 6", edges)
		}
	}
}
