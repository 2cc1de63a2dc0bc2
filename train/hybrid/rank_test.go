package hybrid

import (
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// star is a star of k leaves around vertex 0, each edge both ways, and
// isolated vertices after the leaves.
func star(k, isolated int) *graph.CSR {
	g := &graph.CSR{NumNodes: int64(1 + k + isolated), Indptr: []int64{0}}
	for v := 1; v <= k; v++ {
		g.Indices = append(g.Indices, int32(v))
	}
	g.Indptr = append(g.Indptr, int64(k))
	for range k {
		g.Indices = append(g.Indices, 0)
		g.Indptr = append(g.Indptr, int64(len(g.Indices)))
	}
	for range isolated {
		g.Indptr = append(g.Indptr, int64(len(g.Indices)))
	}
	return g
}

// TestExpectedInputs: on a star, where the inclusions are independent,
// the expectation is the exact chance: the centre, the only seed, draws 3
// of its 10 leaves at the first hop (0.3 each), at the second 2 of them
// (0.2) while each leaf drawn draws the centre, so a leaf is an input with
// chance 1 - 0.7·0.8 = 0.44; every neighbour at -1; seeds of a larger
// training set in a batch at batch/len(train).
func TestExpectedInputs(t *testing.T) {
	g := star(10, 2)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	q := ExpectedInputs(g, true, []int64{0}, 1, []int{3, 2}, 2)
	if !near(q[0], 1) || !near(q[1], 0.44) || !near(q[10], 0.44) || q[11] != 0 || q[12] != 0 {
		t.Errorf("fanouts 3,2 from the centre: %v", q)
	}
	q = ExpectedInputs(g, true, []int64{0}, 1, []int{-1}, 2)
	if !near(q[0], 1) || !near(q[5], 1) || q[11] != 0 {
		t.Errorf("every neighbour: %v", q)
	}
	q = ExpectedInputs(g, true, []int64{1, 2, 3, 11}, 2, []int{0}, 2)
	if !near(q[1], 0.5) || !near(q[11], 0.5) || q[0] != 0 || q[4] != 0 {
		t.Errorf("fanout 0, two seeds of four a batch: %v", q)
	}
	// A leaf as the seed: the centre at the first hop, then each other leaf
	// with chance 2/10.
	q = ExpectedInputs(g, true, []int64{4}, 1, []int{5, 2}, 1)
	if !near(q[4], 1) || !near(q[0], 1) || !near(q[7], 0.2) {
		t.Errorf("fanouts 5,2 from a leaf: %v", q)
	}
}

// TestExpectedInputsDirected: in a graph whose edges are stored one way,
// a vertex is drawn by the vertices whose lists hold it, not by its own
// list: the centre of a star whose leaves list nothing draws each of its
// 10 leaves with chance 0.3, and the leaves draw nothing; on a symmetric
// graph (tiny) both ways of summing give the same expectation.
func TestExpectedInputsDirected(t *testing.T) {
	g := &graph.CSR{NumNodes: 11, Indptr: []int64{0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}}
	for v := 1; v <= 10; v++ {
		g.Indices = append(g.Indices, int32(v))
	}
	q := ExpectedInputs(g, false, []int64{0}, 1, []int{3}, 1)
	if math.Abs(q[0]-1) > 1e-12 || math.Abs(q[4]-0.3) > 1e-12 {
		t.Errorf("a directed star from its centre: %v", q)
	}
	q = ExpectedInputs(g, false, []int64{4}, 1, []int{3}, 1)
	if math.Abs(q[4]-1) > 1e-12 || q[0] != 0 || q[5] != 0 {
		t.Errorf("a directed star from a leaf: %v", q)
	}
	ds, cfg := tiny(t)
	if !ds.Symmetric {
		t.Fatal("tiny is not symmetric")
	}
	a := ExpectedInputs(ds.Graph, true, ds.Train, cfg.Batch, cfg.Fanouts, 2)
	b := ExpectedInputs(ds.Graph, false, ds.Train, cfg.Batch, cfg.Fanouts, 2)
	for v := range a {
		if math.Abs(a[v]-b[v]) > 1e-12 {
			t.Fatalf("vertex %d: %v summed from its list, %v from the others'", v, a[v], b[v])
		}
	}
}

// TestExpectedInputsSampled: on tiny, the expectation agrees with what the
// sampler draws: summed, it is the mean number of a batch's bottom-layer
// inputs within 10% (a vertex's neighbours are not independently in a
// batch: tiny's 16,384 vertices share neighbourhoods; it measured 7% over),
// and the vertices it ranks in the first tenth are inputs of sampled
// batches several times as often as the rest.
func TestExpectedInputsSampled(t *testing.T) {
	ds, cfg := tiny(t)
	g := ds.Graph
	q := ExpectedInputs(g, true, ds.Train, cfg.Batch, cfg.Fanouts, 0)
	const batches = 200
	var sampled [][]int32
	for epoch := 0; len(sampled) < batches; epoch++ {
		perm := train.Shuffle(ds.Train, cfg.Seed, epoch)
		for s := 0; (s+1)*cfg.Batch <= len(perm) && len(sampled) < batches; s++ {
			sampled = append(sampled, perm[s*cfg.Batch:(s+1)*cfg.Batch])
		}
	}
	counts := sampledInputs(t, g, sampled, cfg.Fanouts, cfg.Seed)
	var want, got float64
	for v := range counts {
		want += float64(counts[v]) / batches
		got += q[v]
	}
	if math.Abs(got-want) > 0.1*want {
		t.Errorf("expected inputs a batch %.1f, sampled %.1f", got, want)
	}
	order, err := RankByAccess(g, true, ds.Train, cfg.Batch, cfg.Fanouts, 0)
	if err != nil {
		t.Fatal(err)
	}
	tenth := len(order) / 10
	var top, rest float64
	for i, v := range order {
		if i < tenth {
			top += float64(counts[v])
		} else {
			rest += float64(counts[v])
		}
	}
	top, rest = top/float64(tenth), rest/float64(len(order)-tenth)
	if top < 3*rest {
		t.Errorf("the first tenth ranked is read %.2f times a vertex, the rest %.2f", top, rest)
	}
	t.Logf("inputs a batch: expected %.1f, sampled %.1f; reads a vertex: first tenth %.2f, rest %.2f", got, want, top, rest)
}

// TestRankByAccess: the order is a permutation, by expected reads, then by
// degree: the vertices no batch reaches come last, by degree. A graph of
// int64 ids is refused.
func TestRankByAccess(t *testing.T) {
	g := star(10, 2)
	order, _ := RankByAccess(g, true, []int64{4}, 1, []int{5, 2}, 1)
	want := []int32{0, 4, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	order, _ = RankByAccess(g, true, []int64{11}, 1, []int{5, 2}, 1)
	if order[0] != 11 || order[1] != 0 || order[2] != 1 || len(order) != 13 {
		t.Errorf("an isolated seed: order %v, want it, then the centre by degree, then the leaves", order)
	}
	wide := &graph.CSR{NumNodes: 2, Indptr: []int64{0, 1, 2}, Indices64: []int64{1, 0}}
	if _, err := RankByAccess(wide, true, []int64{0}, 1, []int{5}, 1); err == nil {
		t.Error("a graph of int64 ids was ranked")
	}
	if _, err := RankReached(wide, true, []int64{0}, 1, []int{5}, 1); err == nil {
		t.Error("a graph of int64 ids was ranked by RankReached")
	}
}

// TestRankReached: the hot vertices' order is RankByAccess's without the
// vertices no batch reaches: from a leaf of the star one hop reaches the
// leaf and the centre only; from the centre, every leaf, by degree then
// id, and never the isolated vertices.
func TestRankReached(t *testing.T) {
	g := star(10, 2)
	order, _ := RankReached(g, true, []int64{4}, 1, []int{5}, 1)
	if len(order) != 2 || order[0] != 4 || order[1] != 0 {
		t.Errorf("from a leaf: %v, want [4 0]", order)
	}
	order, _ = RankReached(g, true, []int64{0}, 1, []int{20}, 1)
	want := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if len(order) != len(want) {
		t.Fatalf("from the centre: %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("from the centre: %v, want %v", order, want)
		}
	}
	if order, _ := RankReached(g, true, []int64{11}, 1, []int{5}, 1); len(order) != 1 || order[0] != 11 {
		t.Errorf("from an isolated vertex: %v, want [11]", order)
	}
}

// sampledInputs is, for each vertex, the number of batches whose bottom
// layer reads it, as the sampler draws them (batch s with step s's key).
func sampledInputs(t *testing.T, g *graph.CSR, batches [][]int32, fanouts []int, seed uint64) []int32 {
	t.Helper()
	s, err := sample.NewSampler(g, fanouts, 0)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int32, g.NumNodes)
	var mb sample.MiniBatch
	for step, seeds := range batches {
		if err := s.SampleInto(seeds, rng.Key{Seed: seed, Epoch: 0, Step: uint32(step)}, &mb); err != nil {
			t.Fatal(err)
		}
		for _, v := range mb.InputIDs() {
			counts[v]++
		}
	}
	return counts
}
