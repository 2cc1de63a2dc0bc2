package sample

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// sortedGraph is randomGraph with every row sorted, as graph.CSR's rows
// are (BuildExclusion finds entries by binary search).
func sortedGraph(seed uint64, n, maxDeg int) *graph.CSR {
	g := randomGraph(seed, n, maxDeg)
	for v := range g.NumNodes {
		slices.Sort(g.Indices[g.Indptr[v]:g.Indptr[v+1]])
	}
	return g
}

// excludeCase draws b positives over g: entries of g's rows (some of
// them twice, some reversed), a pair that is no edge, and every entry of
// one vertex's row, so that a destination loses all its neighbours.
func excludeCase(seed uint64, g *graph.CSR, b int) (src, dst []int32, all int32) {
	r := rand.New(rand.NewPCG(seed, 5))
	n := int32(g.NumNodes)
	for all = 0; g.Degree(int64(all)) < 2; all++ {
	}
	for _, w := range g.Neighbors32(int64(all)) {
		src, dst = append(src, all), append(dst, w)
	}
	for len(src) < b {
		x := r.Int32N(n)
		row := g.Neighbors32(int64(x))
		switch {
		case len(row) == 0:
			src, dst = append(src, x), append(dst, (x+1)%n) // most likely no edge
		case r.IntN(3) == 0: // stored reversed
			src, dst = append(src, row[r.IntN(len(row))]), append(dst, x)
		default:
			src, dst = append(src, x), append(dst, row[r.IntN(len(row))])
		}
		if r.IntN(5) == 0 { // the same positive twice
			src, dst = append(src, src[len(src)-1]), append(dst, dst[len(dst)-1])
		}
	}
	return src[:b], dst[:b], all
}

// newExclusion builds the exclusion of the positives into buffers of
// capacity bCap (ones poisoned first, so that unwritten entries show).
func newExclusion(g *graph.CSR, src, dst []int32, reverse bool, bCap int) Exclusion {
	buckets := 4
	for buckets < 4*bCap {
		buckets *= 2
	}
	ex := Exclusion{Keys: make([]int64, 2*bCap), Buckets: make([]int64, buckets)}
	for i := range ex.Keys {
		ex.Keys[i] = 7
	}
	for i := range ex.Buckets {
		ex.Buckets[i] = 7
	}
	BuildExclusion(g, src, dst, reverse, ex)
	return ex
}

// excluded is the set of entries (x, w) of g the positives exclude.
func excluded(g *graph.CSR, src, dst []int32, reverse bool) map[[2]int32]bool {
	out := map[[2]int32]bool{}
	for i := range src {
		for _, p := range [][2]int32{{src[i], dst[i]}, {dst[i], src[i]}}[:1+btoi(reverse)] {
			if slices.Contains(g.Neighbors32(int64(p[0])), p[1]) {
				out[p] = true
			}
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBuildExclusion: the keys are the distinct excluded entries present
// in the graph, as (vertex, row position), sorted by bucket and key, -1
// after them; every bucket names its keys; Find gives each vertex exactly
// its excluded positions in row order, and none to other vertices.
func TestBuildExclusion(t *testing.T) {
	g := sortedGraph(21, 400, 60)
	for _, reverse := range []bool{false, true} {
		src, dst, _ := excludeCase(22, g, 90)
		ex := newExclusion(g, src, dst, reverse, 100)
		want := excluded(g, src, dst, reverse)
		m := len(want)
		if m == 0 || m >= len(src)*(1+btoi(reverse)) {
			t.Fatalf("reverse %v: %d entries of %d positives: the case needs repeats and absent pairs", reverse, m, len(src))
		}
		for i, k := range ex.Keys {
			if i >= m {
				if k != -1 {
					t.Fatalf("reverse %v: key %d = %d past the %d entries, want -1", reverse, i, k, m)
				}
				continue
			}
			x, p := int32(k>>32), int32(k)
			row := g.Neighbors32(int64(x))
			if p < 0 || int(p) >= len(row) || !want[[2]int32{x, row[p]}] {
				t.Fatalf("reverse %v: key %d = (%d, %d) is no excluded entry", reverse, i, x, p)
			}
			if i > 0 {
				prev := ex.Keys[i-1]
				if b0, b1 := ex.Bucket(int32(prev>>32)), ex.Bucket(x); b0 > b1 || b0 == b1 && prev >= k {
					t.Fatalf("reverse %v: keys %d and %d out of order", reverse, i-1, i)
				}
			}
			if w := uint64(ex.Buckets[ex.Bucket(x)]); i < int(w>>32) || i >= int(w>>32)+int(uint32(w)) {
				t.Fatalf("reverse %v: key %d outside its bucket's [%d, +%d)", reverse, i, w>>32, uint32(w))
			}
		}
		for x := range int32(g.NumNodes) {
			lo, e := ex.Find(x)
			var got, wantW []int32
			row := g.Neighbors32(int64(x))
			for j := range e {
				got = append(got, row[int32(ex.Keys[lo+j])])
			}
			for _, w := range row {
				if want[[2]int32{x, w}] {
					wantW = append(wantW, w)
				}
			}
			if !slices.Equal(got, wantW) {
				t.Fatalf("reverse %v: Find(%d) gives %v, want %v", reverse, x, got, wantW)
			}
		}
	}
}

// TestLayerExcluding: every destination samples, by the convention's
// draws, its row without its excluded entries (refSample over the row
// with them removed): endpoints lose their excluded neighbours and keep
// min(fanout, d-e), a vertex all of whose neighbours are excluded gets
// none, and every other destination's neighbours equal Layer's; for
// every fanout class (all, small, 32, large) and thread count, with skip.
func TestLayerExcluding(t *testing.T) {
	g := sortedGraph(31, 600, 120)
	key := rng.Key{Seed: 0xabcdef, Epoch: 1, Step: 9, Stream: 2}
	for _, reverse := range []bool{false, true} {
		src, dst, all := excludeCase(32, g, 200)
		ex := newExclusion(g, src, dst, reverse, 256)
		gone := excluded(g, src, dst, reverse)
		ids := append(append(append([]int32{all}, src...), dst...), randomIDs(33, 600, 700, false)...)
		skip := make([]int32, g.NumNodes)
		for v := range skip {
			skip[v] = -1 + int32(btoi(v%11 == 3))
		}
		for _, fanout := range []int{-1, 0, 1, 3, 8, 16, 32, 33, 70} {
			wantPtr, wantNbrs := []int32{0}, []int32{}
			for _, v := range ids {
				var row []int32
				for _, w := range g.Neighbors32(int64(v)) {
					if !gone[[2]int32{v, w}] && skip[v] < 0 {
						row = append(row, w)
					}
				}
				wantNbrs = append(wantNbrs, refSample(row, fanout, v, key)...)
				wantPtr = append(wantPtr, int32(len(wantNbrs)))
			}
			for _, threads := range []int{1, 3} {
				ptr := make([]int32, len(ids)+1)
				total := LayerExcluding(g, ids, fanout, key, ptr, nil, threads, skip, &ex)
				nbrs := make([]int32, total)
				LayerExcluding(g, ids, fanout, key, ptr, nbrs, threads, skip, &ex)
				if !slices.Equal(ptr, wantPtr) || !slices.Equal(nbrs, wantNbrs) {
					t.Fatalf("reverse %v fanout %d threads %d: differs from sampling the rows without their excluded entries", reverse, fanout, threads)
				}
			}
			if fanout != 0 && ptr1(wantPtr, 0) != 0 {
				t.Fatalf("reverse %v fanout %d: vertex %d, all of whose neighbours are excluded, got some", reverse, fanout, all)
			}
		}
	}
}

// ptr1 is destination i's count.
func ptr1(ptr []int32, i int) int32 { return ptr[i+1] - ptr[i] }

// TestLayerExcludingEmpty: an exclusion of no positives changes nothing.
func TestLayerExcludingEmpty(t *testing.T) {
	g := sortedGraph(41, 300, 50)
	ex := newExclusion(g, nil, nil, true, 8)
	dst := randomIDs(42, 300, 400, false)
	key := rng.Key{Seed: 4, Step: 2}
	for _, fanout := range []int{-1, 5, 40} {
		wantPtr, wantNbrs := runLayer(g, dst, fanout, key, 1)
		ptr := make([]int32, len(dst)+1)
		nbrs := make([]int32, len(wantNbrs))
		LayerExcluding(g, dst, fanout, key, ptr, nbrs, 1, nil, &ex)
		if !slices.Equal(ptr, wantPtr) || !slices.Equal(nbrs, wantNbrs) {
			t.Fatalf("fanout %d: an empty exclusion changed the sample", fanout)
		}
	}
}
