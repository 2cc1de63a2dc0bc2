package rmat

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/internal/parallel"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

func TestLookup(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"tiny", "products-sim", "papers-sim", "hetero-tiny", "mag-sim", "igbh-sim"}) {
		t.Fatalf("Names() = %v", got)
	}
	_, err := Lookup("products")
	if err == nil || !strings.Contains(err.Error(), `"products"`) ||
		!strings.Contains(err.Error(), "tiny, products-sim, papers-sim") {
		t.Fatalf("unknown preset: got %v", err)
	}
	p, err := Lookup("tiny")
	if err != nil {
		t.Fatal(err)
	}
	p.Fanouts[0] = 99
	if q, _ := Lookup("tiny"); q.Fanouts[0] != 10 {
		t.Fatal("Lookup returned a shared Fanouts slice")
	}
}

// TestPresetsMatchDesign pins the presets to DESIGN §6.
func TestPresetsMatchDesign(t *testing.T) {
	type row struct {
		scale          int
		pairs          int64
		feat, classes  int
		train, valid   int64
		trainF, validF float64
		layers, hidden int
		batch          int
		dropout, lr    float32
	}
	want := map[string]row{
		"tiny":         {14, 200_000, 32, 8, 0, 0, 0.2, 0.1, 2, 64, 256, 0.5, 0.01},
		"products-sim": {21, 62_000_000, 100, 47, 196_615, 39_323, 0, 0, 3, 256, 1024, 0.5, 0.003},
		"papers-sim":   {24, 400_000_000, 128, 172, 1_207_179, 125_265, 0, 0, 3, 256, 1024, 0.5, 0.003},
	}
	fanouts := map[string][]int{"tiny": {10, 5}, "products-sim": {15, 10, 5}, "papers-sim": {15, 10, 5}}
	for name, w := range want {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		got := row{p.Scale, p.Pairs, p.FeatDim, p.Classes, p.NumTrain, p.NumValid, p.TrainFrac, p.ValidFrac,
			p.Layers, p.Hidden, p.Batch, p.Dropout, p.LR}
		if !slices.Equal(p.Fanouts, fanouts[name]) {
			t.Errorf("%s: fanouts %v, want %v", name, p.Fanouts, fanouts[name])
		}
		if got != w {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
		if p.SignalDim != p.FeatDim {
			t.Errorf("%s: signal width %d, want its feature width %d", name, p.SignalDim, p.FeatDim)
		}
		if p.A != 0.57 || p.B != 0.19 || p.C != 0.19 || p.Model != "sage" || p.Name != name {
			t.Errorf("%s: R-MAT (%g, %g, %g), model %q", name, p.A, p.B, p.C, p.Model)
		}
		if err := p.check(); err != nil {
			t.Error(err)
		}
	}
}

// TestRMATQuadrants checks the quadrant frequencies at the top and bottom
// recursion levels, with the identity permutation.
func TestRMATQuadrants(t *testing.T) {
	p, _ := Lookup("tiny")
	p.Scale, p.Pairs = 10, 400_000
	identity := idPermutation{mask: 1<<p.Scale - 1, shift: 32, mul: [4]uint32{1, 1, 1, 1}}
	src, dst := rmatEdges(p, &identity, 7, 2, parallel.NewProgress(nil))
	for _, shift := range []int{p.Scale - 1, 0} {
		var q [4]float64
		for i := range src {
			q[(src[i]>>shift&1)*2+dst[i]>>shift&1]++
		}
		want := [4]float64{0.57, 0.19, 0.19, 0.05}
		for k := range q {
			if f := q[k] / float64(p.Pairs); math.Abs(f-want[k]) > 0.005 {
				t.Errorf("level bit %d: quadrant %d frequency %.4f, want %.2f", shift, k, f, want[k])
			}
		}
	}
}

func TestIDPermutation(t *testing.T) {
	for bits := 1; bits <= 16; bits++ {
		p := newIDPermutation(bits, 3)
		n := uint32(1) << bits
		seen := make([]bool, n)
		fixed := 0
		for x := range n {
			y := p.apply(x)
			if y >= n || seen[y] {
				t.Fatalf("bits %d: %d maps to %d, out of range or taken", bits, x, y)
			}
			seen[y] = true
			if y == x {
				fixed++
			}
		}
		if bits >= 10 && fixed > 10 {
			t.Errorf("bits %d: %d fixed points", bits, fixed)
		}
	}
	a, b := newIDPermutation(20, 1), newIDPermutation(20, 2)
	same := 0
	for x := range uint32(1000) {
		if a.apply(x) == b.apply(x) {
			same++
		}
	}
	if same > 2 {
		t.Errorf("seeds 1 and 2 agree on %d of 1000 ids", same)
	}
}

func TestVoteLabel(t *testing.T) {
	types := []int32{0, 1, 2, 3, 1, 2}
	cnt := make([]int32, 4)
	cases := []struct {
		nbrs []int32
		own  int32
		want int32
	}{
		{nil, 2, -1},
		{[]int32{3}, 0, 3},          // one neighbour decides
		{[]int32{1, 4, 2}, 2, 1},    // plurality: type 1 twice
		{[]int32{0, 3}, 3, 3},       // tie {0, 3}: own type 3 wins
		{[]int32{0, 2}, 3, 0},       // tie {0, 2}: 0 comes first after 3
		{[]int32{1, 3}, 2, 3},       // tie {1, 3}: 3 comes first after 2
		{[]int32{2, 5, 1, 4}, 0, 1}, // tie {1, 2} twice each: 1 first after 0
	}
	for _, c := range cases {
		if got := voteLabel(c.nbrs, types, c.own, 4, cnt); got != c.want {
			t.Errorf("voteLabel(%v, own %d) = %d, want %d", c.nbrs, c.own, got, c.want)
		}
		if slices.Max(cnt) != 0 {
			t.Fatalf("scratch not cleared: %v", cnt)
		}
	}
}

func TestQualityMeasures(t *testing.T) {
	// path 0-1-2 plus isolated 3: labels 0, 0, 1, -1
	g := &graph.CSR{NumNodes: 4, Indptr: []int64{0, 1, 3, 4, 4}, Indices: []int32{1, 0, 2, 1}}
	labels := []int32{0, 0, 1, -1}
	if h := EdgeHomophily(g, labels); h != 0.5 {
		t.Errorf("EdgeHomophily = %g, want 0.5", h)
	}
	if c := ClassCounts(labels, 3); !slices.Equal(c, []int64{2, 1, 0}) {
		t.Errorf("ClassCounts = %v", c)
	}
	if h := EdgeHomophily(g, []int32{-1, -1, -1, -1}); h != 0 {
		t.Errorf("no labelled edge: %g", h)
	}
}

func generate(t *testing.T, name string, seed uint64, threads int) *dataset.Dataset {
	t.Helper()
	p, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Generate(p, Options{Seed: seed, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func sameDataset(a, b *dataset.Dataset) bool {
	return slices.Equal(a.Graph.Indptr, b.Graph.Indptr) && slices.Equal(a.Graph.Indices, b.Graph.Indices) &&
		slices.Equal(a.Features, b.Features) && slices.Equal(a.Labels, b.Labels) &&
		slices.Equal(a.Train, b.Train) && slices.Equal(a.Valid, b.Valid) && slices.Equal(a.Test, b.Test)
}

func TestGenerateDeterministic(t *testing.T) {
	a := generate(t, "tiny", 1, 1)
	for _, th := range []int{2, 3} {
		if !sameDataset(a, generate(t, "tiny", 1, th)) {
			t.Fatalf("threads=%d gives a different dataset than threads=1", th)
		}
	}
	if sameDataset(a, generate(t, "tiny", 2, 2)) {
		t.Fatal("seeds 1 and 2 give the same dataset")
	}
}
