package graph

import (
	"slices"
	"strings"
	"testing"
)

// sample returns a valid 4-vertex graph: 0-1, 0-2, 1-2, 3 isolated.
func sample() *CSR {
	return &CSR{
		NumNodes: 4,
		Indptr:   []int64{0, 2, 4, 6, 6},
		Indices:  []int32{1, 2, 0, 2, 0, 1},
	}
}

func TestValidateAcceptsValid(t *testing.T) {
	if err := sample().Validate(); err != nil {
		t.Fatal(err)
	}
	empty := &CSR{Indptr: []int64{0}, Indices: []int32{}}
	if err := empty.Validate(); err != nil {
		t.Fatalf("empty graph: %v", err)
	}
}

func TestValidateWideIndices(t *testing.T) {
	g := sample()
	g.Indices64 = []int64{1, 2, 0, 2, 0, 1}
	g.Indices = nil
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "int32 indices") {
		t.Fatalf("int64 indices on a small graph: got %v", err)
	}
}

func TestValidateCatchesCorruption(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(g *CSR)
		want    string
	}{
		{"short indptr", func(g *CSR) { g.Indptr = g.Indptr[:4] }, "indptr has 4 entries"},
		{"indptr not from 0", func(g *CSR) { g.Indptr[0] = 1 }, "indptr[0] = 1"},
		{"decreasing", func(g *CSR) { g.Indptr[2] = 1 }, "row 1: indptr decreases"},
		{"end mismatch", func(g *CSR) { g.Indices = g.Indices[:5] }, "ends at 6 but there are 5"},
		{"index too large", func(g *CSR) { g.Indices[3] = 4 }, "edge 3 (row 1): neighbour 4"},
		{"negative index", func(g *CSR) { g.Indices[5] = -1 }, "edge 5 (row 2): neighbour -1"},
		{"negative count", func(g *CSR) { g.NumNodes = -1 }, "negative vertex count"},
		{"no indices", func(g *CSR) { g.Indices = nil }, "ends at 6 but there are 0"},
	}
	for _, c := range cases {
		g := sample()
		c.corrupt(g)
		err := g.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want error containing %q", c.name, err, c.want)
		}
	}
}

func TestRowOfSkipsEmptyRows(t *testing.T) {
	g := &CSR{NumNodes: 5, Indptr: []int64{0, 0, 2, 2, 2, 3}}
	for e, want := range []int64{1, 1, 4} {
		if got := g.rowOf(int64(e)); got != want {
			t.Errorf("rowOf(%d) = %d, want %d", e, got, want)
		}
	}
}

func TestDegreeStats(t *testing.T) {
	s := sample().DegreeStats()
	want := DegreeStats{Min: 0, Max: 2, Mean: 1.5, P50: 2, P90: 2, P99: 2, Isolated: 1}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	// Degrees 1..100 (vertex v has degree v+1): nearest-rank percentiles.
	n := int64(100)
	g := &CSR{NumNodes: n, Indptr: make([]int64, n+1)}
	for v := range n {
		g.Indptr[v+1] = g.Indptr[v] + v + 1
	}
	g.Indices = make([]int32, g.Indptr[n])
	s = g.DegreeStats()
	want = DegreeStats{Min: 1, Max: 100, Mean: 50.5, P50: 50, P90: 90, P99: 99}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	// Same through the sorting path.
	if got := sortPercentiles(g, []int64{500, 900, 990}); !slices.Equal(got, []int64{50, 90, 99}) {
		t.Fatalf("sortPercentiles = %v", got)
	}
	if (&CSR{}).DegreeStats() != (DegreeStats{}) {
		t.Fatal("empty graph: non-zero stats")
	}
}
