package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// communities builds k groups of size vertices, densely linked inside and
// by a few edges across, with the vertex ids shuffled.
func communities(t *testing.T, k, size int) *CSR {
	r := rand.New(rand.NewPCG(7, 8))
	n := k * size
	perm := r.Perm(n)
	var src, dst []int32
	for c := range k {
		for range size * 6 {
			u, v := c*size+r.IntN(size), c*size+r.IntN(size)
			src, dst = append(src, int32(perm[u])), append(dst, int32(perm[v]))
		}
	}
	for range n / 10 {
		src, dst = append(src, int32(r.IntN(n))), append(dst, int32(r.IntN(n)))
	}
	g, err := FromEdges(int64(n), src, dst, BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPartition: every vertex gets a part, the parts stay within 5% of
// the mean load, the result is deterministic, and on a graph of
// communities the greedy pass cuts far fewer edges than a split by id
// (which cuts about (parts-1)/parts of them).
func TestPartition(t *testing.T) {
	g := communities(t, 4, 500)
	for _, parts := range []int{1, 2, 4, 3} {
		owner, err := Partition(g, parts)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Partition(g, parts)
		if !slices.Equal(owner, again) {
			t.Fatal("partition not deterministic")
		}
		for v, p := range owner {
			if p < 0 || int(p) >= parts {
				t.Fatalf("vertex %d in part %d of %d", v, p, parts)
			}
		}
		st := g.PartitionStats(owner, parts)
		byID := make([]int32, g.NumNodes)
		for v := range byID {
			byID[v] = int32(int64(v) * int64(parts) / g.NumNodes)
		}
		naive := g.PartitionStats(byID, parts)
		t.Logf("%d parts: edge cut %.3f (split by id %.3f), balance %.3f, vertices %v", parts, st.Cut, naive.Cut, st.Balance, st.Vertices)
		if st.Balance > 1.05+1e-9 {
			t.Errorf("%d parts: balance %.3f over 1.05", parts, st.Balance)
		}
		if parts > 1 && st.Cut > naive.Cut/2 {
			t.Errorf("%d parts: cut %.3f, not below half the split by id's %.3f", parts, st.Cut, naive.Cut)
		}
		if parts == 1 && st.Cut != 0 {
			t.Errorf("one part cuts %.3f", st.Cut)
		}
	}
	if _, err := Partition(g, 0); err == nil {
		t.Error("0 parts accepted")
	}
}

// TestReplicated: the highest-degree vertices first, within the budget.
func TestReplicated(t *testing.T) {
	g := communities(t, 2, 300)
	for _, budget := range []int64{0, 100, 4000, 1 << 40} {
		rep := Replicated(g, budget)
		var used int64
		for i, v := range rep {
			used += 4 * g.Degree(int64(v))
			if i > 0 && g.Degree(int64(v)) > g.Degree(int64(rep[i-1])) {
				t.Fatalf("budget %d: vertex %d (degree %d) after one of degree %d", budget, v, g.Degree(int64(v)), g.Degree(int64(rep[i-1])))
			}
		}
		if used > budget {
			t.Errorf("budget %d: %d bytes replicated", budget, used)
		}
		if budget == 1<<40 && int64(len(rep)) != g.NumNodes {
			t.Errorf("an unbounded budget replicates %d of %d vertices", len(rep), g.NumNodes)
		}
	}
}

// TestDegreeOrder: every vertex once, by degree, highest first, ties by
// id.
func TestDegreeOrder(t *testing.T) {
	g := communities(t, 2, 300)
	order := DegreeOrder(g)
	if int64(len(order)) != g.NumNodes {
		t.Fatalf("%d vertices ordered, want %d", len(order), g.NumNodes)
	}
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		da, db := g.Degree(int64(a)), g.Degree(int64(b))
		if db > da || (db == da && b <= a) {
			t.Fatalf("vertex %d (degree %d) after vertex %d (degree %d)", b, db, a, da)
		}
	}
}
