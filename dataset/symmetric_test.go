package dataset

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

func TestCheckSymmetric(t *testing.T) {
	if err := checkSymmetric(ring(10).Graph); err != nil {
		t.Fatalf("ring: %v", err)
	}
	// A large symmetric graph (the parallel pass), then one edge dropped.
	r := rand.New(rand.NewPCG(1, 2))
	var src, dst []int32
	for range 100_000 {
		src, dst = append(src, r.Int32N(5000)), append(dst, r.Int32N(5000))
	}
	g, err := graph.FromEdges(5000, src, dst, graph.BuildOptions{Symmetrize: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSymmetric(g); err != nil {
		t.Fatalf("symmetric graph: %v", err)
	}
	u := int64(1234)
	v := int64(g.Indices[g.Indptr[u]])
	g.Indices[g.Indptr[u]] = int32(u) // u->v becomes a self loop
	err = checkSymmetric(g)
	if err == nil || !strings.Contains(err.Error(), "has no reverse") || !strings.Contains(err.Error(), "->") {
		t.Fatalf("edge %d->%d replaced: %v", u, v, err)
	}
	// A repeated edge whose reverse is stored once.
	d := &graph.CSR{NumNodes: 2, Indptr: []int64{0, 2, 3}, Indices: []int32{1, 1, 0}}
	if err := checkSymmetric(d); err == nil || !strings.Contains(err.Error(), "edge 0->1 is stored more often than its reverse 1->0") {
		t.Fatalf("repeated edge: %v", err)
	}
}
