package sample

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// runLayer calls Layer with exactly sized outputs.
func runLayer(g *graph.CSR, dst []int32, fanout int, key rng.Key, threads int) ([]int32, []int32) {
	indptr := make([]int32, len(dst)+1)
	total := Layer(g, dst, fanout, key, indptr, nil, threads)
	nbrs := make([]int32, total)
	if got := Layer(g, dst, fanout, key, indptr, nbrs, threads); got != total {
		panic(fmt.Sprintf("total changed between calls: %d then %d", total, got))
	}
	return indptr, nbrs
}

func TestLayerMatchesReference(t *testing.T) {
	g := randomGraph(1, 3000, 120)
	dst := randomIDs(2, 3000, 2500, false) // repeats allowed at this level
	key := rng.Key{Seed: 0xfeedbeef12345678, Epoch: 2, Step: 31, Stream: 1}
	for _, fanout := range []int{-1, 0, 1, 3, 4, 5, 15, 32, 33, 50, 200} {
		wantPtr, wantNbrs := refLayer(g, dst, fanout, key)
		for _, threads := range []int{1, 2, 7} {
			ptr, nbrs := runLayer(g, dst, fanout, key, threads)
			if !slices.Equal(ptr, wantPtr) {
				t.Fatalf("fanout %d threads %d: indptr differs from the reference", fanout, threads)
			}
			if !slices.Equal(nbrs, wantNbrs) {
				t.Fatalf("fanout %d threads %d: neighbours differ from the reference", fanout, threads)
			}
		}
	}
}

func TestLayerProperties(t *testing.T) {
	for seed := uint64(10); seed < 14; seed++ {
		g := randomGraph(seed, 500, 80)
		dst := randomIDs(seed, 500, 300, true)
		key := rng.Key{Seed: seed, Step: 5}
		for _, fanout := range []int{-1, 0, 1, 2, 7, 10, 40} {
			ptr, nbrs := runLayer(g, dst, fanout, key, 2)
			for i, v := range dst {
				row := g.Neighbors32(int64(v))
				got := nbrs[ptr[i]:ptr[i+1]]
				want := len(row)
				if fanout >= 0 {
					want = min(want, fanout)
				}
				if len(got) != want {
					t.Fatalf("seed %d fanout %d vertex %d (degree %d): %d neighbours, want %d",
						seed, fanout, v, len(row), len(got), want)
				}
				if (fanout < 0 || fanout >= len(row)) && !slices.Equal(got, row) {
					t.Fatalf("fanout %d vertex %d: all neighbours must come in CSR order", fanout, v)
				}
				seen := map[int32]bool{}
				for _, u := range got {
					if seen[u] {
						t.Fatalf("fanout %d vertex %d: neighbour %d sampled twice", fanout, v, u)
					}
					seen[u] = true
					if !slices.Contains(row, u) {
						t.Fatalf("fanout %d vertex %d: %d is not a neighbour", fanout, v, u)
					}
				}
			}
		}
	}
}

func TestLayerCapacity(t *testing.T) {
	g := randomGraph(3, 800, 60)
	dst := randomIDs(4, 800, 700, false)
	key := rng.Key{Seed: 3, Step: 1}
	for _, threads := range []int{1, 2, 3} {
		fullPtr, full := runLayer(g, dst, 6, key, threads)
		for _, capacity := range []int{0, 1, 7, len(full) / 3, len(full) - 1} {
			buf := make([]int32, len(full)+8)
			for i := range buf {
				buf[i] = -7
			}
			ptr := make([]int32, len(dst)+1)
			total := Layer(g, dst, 6, key, ptr, buf[:capacity], threads)
			if total != len(full) || !slices.Equal(ptr, fullPtr) {
				t.Fatalf("capacity %d: total %d (want %d) or offsets differ", capacity, total, len(full))
			}
			if !slices.Equal(buf[:capacity], full[:capacity]) {
				t.Fatalf("capacity %d threads %d: written prefix differs", capacity, threads)
			}
			for i := capacity; i < len(buf); i++ {
				if buf[i] != -7 {
					t.Fatalf("capacity %d: wrote past the capacity at %d", capacity, i)
				}
			}
		}
	}
}

func TestLayerKeysChangeSample(t *testing.T) {
	g := randomGraph(5, 400, 100)
	dst := randomIDs(6, 400, 300, true)
	base := rng.Key{Seed: 9, Epoch: 1, Step: 1, Stream: 0}
	_, ref := runLayer(g, dst, 5, base, 1)
	for _, k := range []rng.Key{
		{Seed: 9, Epoch: 1, Step: 2, Stream: 0},
		{Seed: 9, Epoch: 2, Step: 1, Stream: 0},
		{Seed: 9, Epoch: 1, Step: 1, Stream: 1},
		{Seed: 10, Epoch: 1, Step: 1, Stream: 0},
	} {
		_, got := runLayer(g, dst, 5, k, 1)
		if len(got) != len(ref) {
			t.Fatalf("key %+v: %d edges, want %d (counts depend only on degrees)", k, len(got), len(ref))
		}
		same := 0
		for i := range got {
			if got[i] == ref[i] {
				same++
			}
		}
		if same > len(got)/2 {
			t.Errorf("key %+v: %d of %d sampled neighbours equal the base key's", k, same, len(got))
		}
	}
}

// starGraph has vertex 0 linked to 1..d.
func starGraph(d int) *graph.CSR {
	indptr := make([]int64, d+2)
	indices := make([]int32, d)
	for i := range indices {
		indices[i] = int32(i + 1)
	}
	for v := 1; v <= d+1; v++ {
		indptr[v] = int64(d)
	}
	return &graph.CSR{NumNodes: int64(d + 1), Indptr: indptr, Indices: indices}
}

// Each neighbour of a star's centre is included with probability k/d. The
// seed is fixed, so this check is deterministic; the bound is the 99.99th
// percentile of chi-square with d-1 degrees of freedom.
func TestLayerUniformInclusion(t *testing.T) {
	const d, k, trials = 20, 5, 20000
	g := starGraph(d)
	counts := make([]float64, d+1)
	ptr := make([]int32, 2)
	nbrs := make([]int32, k)
	for s := uint32(0); s < trials; s++ {
		Layer(g, []int32{0}, k, rng.Key{Seed: 77, Step: s}, ptr, nbrs, 1)
		for _, u := range nbrs {
			counts[u]++
		}
	}
	expect := float64(trials) * k / d
	chi := 0.0
	for u := 1; u <= d; u++ {
		chi += (counts[u] - expect) * (counts[u] - expect) / expect
	}
	t.Logf("chi-square %.1f", chi)
	if chi > 48 { // chi-square, 19 degrees of freedom, p = 1e-4
		t.Errorf("inclusion counts are not uniform: chi-square %.1f (19 dof), counts %v", chi, counts[1:])
	}
}

// Every k-subset is equally likely: d = 6, k = 3 has 20 subsets.
func TestLayerUniformSubsets(t *testing.T) {
	const d, k, trials = 6, 3, 20000
	g := starGraph(d)
	counts := map[int]float64{}
	ptr := make([]int32, 2)
	nbrs := make([]int32, k)
	for s := uint32(0); s < trials; s++ {
		Layer(g, []int32{0}, k, rng.Key{Seed: 5, Epoch: 3, Step: s}, ptr, nbrs, 1)
		mask := 0
		for _, u := range nbrs {
			mask |= 1 << u
		}
		counts[mask]++
	}
	if len(counts) != 20 {
		t.Fatalf("%d distinct subsets, want 20", len(counts))
	}
	expect := float64(trials) / 20
	chi := 0.0
	for _, c := range counts {
		chi += (c - expect) * (c - expect) / expect
	}
	t.Logf("chi-square %.1f", chi)
	if chi > 45 { // chi-square, 19 degrees of freedom, p < 1e-4
		t.Errorf("subset counts are not uniform: chi-square %.1f (19 dof)", chi)
	}
}

// TestLayerGolden pins the convention with values computed outside this
// package (an independent Philox transcription), which a GPU twin must
// reproduce: vertex 0 of a star with 10 leaves (row 1..10), vertex 3 a leaf
// without neighbours.
func TestLayerGolden(t *testing.T) {
	g := starGraph(10)
	key := rng.Key{Seed: 0x0123456789abcdef, Epoch: 1, Step: 2, Stream: 3}
	for _, c := range []struct {
		fanout int
		want   []int32
	}{
		{3, []int32{4, 2, 3}},
		{6, []int32{3, 1, 2, 8, 9, 5}},
	} {
		ptr, got := runLayer(g, []int32{0, 3}, c.fanout, key, 1)
		if !slices.Equal(got, c.want) || !slices.Equal(ptr, []int32{0, int32(c.fanout), int32(c.fanout)}) {
			t.Errorf("fanout %d: sample %v offsets %v, want %v", c.fanout, got, ptr, c.want)
		}
	}
}
