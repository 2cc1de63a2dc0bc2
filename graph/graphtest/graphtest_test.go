package graphtest

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

// TestRows lists a small graph's rows, an empty one among them, as copies:
// changing the result leaves the graph as it was.
func TestRows(t *testing.T) {
	g := &graph.CSR{NumNodes: 3, Indptr: []int64{0, 2, 2, 3}, Indices: []int32{2, 1, 0}}
	got := Rows(g)
	want := [][]int32{{2, 1}, {}, {0}}
	if !slices.EqualFunc(got, want, slices.Equal) || got[1] == nil {
		t.Fatalf("Rows = %v, want %v with an empty (not nil) row 1", got, want)
	}
	got[0][0] = 7
	if g.Indices[0] != 2 {
		t.Errorf("changing a row changed the graph's indices to %v", g.Indices)
	}
}
