package sample

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/rng"
)

// TestSharedNegativesUniform: a step's shared negatives are distinct
// vertices; k = nodes draws every vertex once; over many steps every
// vertex is drawn about equally often (Floyd's sampling is uniform over
// k-subsets), within five standard deviations.
func TestSharedNegativesUniform(t *testing.T) {
	const nodes, k, steps = 50, 10, 4000
	counts := make([]int, nodes)
	out := make([]int32, k)
	for s := range steps {
		key := rng.Key{Seed: 9, Step: uint32(s), Stream: 251}
		SharedNegatives(key, 1<<31, nodes, nil, 0, out)
		seen := map[int32]bool{}
		for _, v := range out {
			if seen[v] || v < 0 || v >= nodes {
				t.Fatalf("step %d: %v repeats or leaves the vertices at %d", s, out, v)
			}
			seen[v] = true
			counts[v]++
		}
	}
	p := float64(k) / nodes
	mean, sd := steps*p, math.Sqrt(steps*p*(1-p))
	for v, c := range counts {
		if math.Abs(float64(c)-mean) > 5*sd {
			t.Errorf("vertex %d drawn %d times in %d steps, want %.0f ± %.0f", v, c, steps, mean, 5*sd)
		}
	}
	all := make([]int32, nodes)
	SharedNegatives(rng.Key{Seed: 2}, 1<<31, nodes, nil, 0, all)
	slices.Sort(all)
	for v, got := range all {
		if got != int32(v) {
			t.Fatalf("sharing all %d vertices: sorted %v", nodes, all)
		}
	}
}

// TestSharedNegativesByDegree: drawn by degree, the shared negatives are
// distinct vertices of some degree, in the order Negative draws them
// with repeats skipped; where repeats exhaust the budget (two vertices
// hold all the degree, three are asked for), the draws past it are taken
// as they come.
func TestSharedNegativesByDegree(t *testing.T) {
	dist := []int32{0, 3, 3, 10, 10, 12, 20} // degrees 3 0 7 0 2 8
	key := rng.Key{Seed: 4, Epoch: 1, Step: 6, Stream: 251}
	out := make([]int32, 4)
	SharedNegatives(key, 1<<31, 6, dist, 32*4, out)
	var want []int32
	for a := 0; len(want) < 4; a++ {
		if v := Negative(key.Word(1<<31, uint32(a)), 6, dist); !slices.Contains(want, v) {
			want = append(want, v)
		}
	}
	if !slices.Equal(out, want) {
		t.Errorf("shared negatives by degree %v, want %v", out, want)
	}
	for _, v := range out {
		if dist[v+1] == dist[v] {
			t.Errorf("vertex %d of degree 0 drawn", v)
		}
	}
	two := []int32{0, 5, 5, 9} // two vertices of some degree
	out = make([]int32, 3)
	SharedNegatives(key, 1<<31, 3, two, 8, out)
	if out[0] == out[1] || out[2] == 1 || (out[2] != out[0] && out[2] != out[1]) {
		t.Errorf("three of two vertices: %v, want both, then a repeat past the budget", out)
	}
}
