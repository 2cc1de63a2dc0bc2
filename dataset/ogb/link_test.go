package ogb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
	"github.com/fanout-gnn/fanout/dataset/torchzip"
)

// TestImportLink: both OGB link layouts import into a valid dataset whose
// link task holds the split files' edges (self loops, repeats and held-out
// edges that are training edges dropped) and their negatives, each with
// its positive's source.
func TestImportLink(t *testing.T) {
	for _, citation := range []bool{false, true} {
		l := ogbtest.Link{Nodes: 120, Negatives: 3, Citation: citation}
		dir := ogbtest.WriteLink(t, filepath.Join(t.TempDir(), "ogbl-fixture"), l)
		if !IsLink(dir) || IsLink(writeTree(t, "node", tinyFiles())) {
			t.Fatal("IsLink does not tell a link folder from a node one")
		}
		d, err := ImportLink(dir, Options{})
		if err != nil {
			t.Fatalf("citation %v: %v", citation, err)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("citation %v: %v", citation, err)
		}
		train, valid, test := l.Counts()
		s := d.Link
		got := []int{dataset.Pairs(s.Train), dataset.Pairs(s.Valid), dataset.Pairs(s.Test), s.Negatives, dataset.Pairs(s.TestNeg)}
		want := []int{train, valid, test, 3, 3 * test}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("citation %v: train, valid, test, negatives, test negatives = %v, want %v", citation, got, want)
			}
		}
		if !strings.Contains(d.Source, "; 1 held-out edges dropped") {
			t.Fatalf("citation %v: source %q, want the valid.pt training edge dropped", citation, d.Source)
		}
		if d.Graph.NumNodes != 120 || d.Graph.NumEdges() != int64(2*train) || !d.Symmetric || d.FeatDim != 4 || d.Name != "ogbl-fixture" {
			t.Fatalf("citation %v: %d vertices, %d edges, symmetric %v, %d features, name %s", citation, d.Graph.NumNodes, d.Graph.NumEdges(), d.Symmetric, d.FeatDim, d.Name)
		}
		for i := 0; i < dataset.Pairs(s.TestNeg); i++ {
			u, w := s.TestNeg[2*i], s.TestNeg[2*i+1]
			if want := (u + 30 + 7*int32(i%3)) % 120; w != want {
				t.Fatalf("citation %v: test negative %d is (%d, %d), want destination %d", citation, i, u, w, want)
			}
		}
	}
}

// TestImportLinkErrors: a split file with the wrong tensors, a vertex out
// of range or a negative that is an edge is refused naming the file.
func TestImportLinkErrors(t *testing.T) {
	cases := []struct {
		name string
		file string
		m    map[string]*torchzip.Tensor
		want string
	}{
		{"no positives", "train", map[string]*torchzip.Tensor{"weight": {Shape: []int64{1}, Floats: []float64{1}}}, "no 'edge' nor 'source_node'"},
		{"wrong shape", "train", map[string]*torchzip.Tensor{"edge": {Shape: []int64{2, 3}, Ints: make([]int64, 6)}}, "want integers of shape [* 2]"},
		{"out of range", "test", map[string]*torchzip.Tensor{"edge": {Shape: []int64{1, 2}, Ints: []int64{0, 500}},
			"edge_neg": {Shape: []int64{1, 2}, Ints: []int64{0, 40}}}, "is vertex 500, want [0, 120)"},
		{"no negatives", "valid", map[string]*torchzip.Tensor{"edge": {Shape: []int64{1, 2}, Ints: []int64{0, 40}}}, "no negatives"},
		{"negative is an edge", "valid", map[string]*torchzip.Tensor{"edge": {Shape: []int64{1, 2}, Ints: []int64{0, 40}},
			"edge_neg": {Shape: []int64{1, 2}, Ints: []int64{9, 5}}}, "every one of the 1 positives, or one of its negatives, is an edge"},
	}
	for _, c := range cases {
		dir := ogbtest.WriteLink(t, t.TempDir(), ogbtest.Link{Nodes: 120, Negatives: 1})
		file := filepath.Join(dir, "split", "random", c.file+".pt")
		if err := torchzip.Write(file, c.m); err != nil {
			t.Fatal(err)
		}
		_, err := ImportLink(dir, Options{})
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", c.name, err, file, c.want)
		}
	}
	dir := ogbtest.WriteLink(t, t.TempDir(), ogbtest.Link{Nodes: 120, Negatives: 1})
	if err := os.WriteFile(filepath.Join(dir, "split", "random", "test.pt"), []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportLink(dir, Options{}); err == nil || !strings.Contains(err.Error(), "test.pt: not a zip archive") {
		t.Errorf("legacy file: error %v", err)
	}
}

// TestImportLinkDropsNegativeEdges: a held-out edge whose negative is a
// training edge is dropped with its negatives; the others stay.
func TestImportLinkDropsNegativeEdges(t *testing.T) {
	dir := ogbtest.WriteLink(t, t.TempDir(), ogbtest.Link{Nodes: 120, Negatives: 1})
	valid := map[string]*torchzip.Tensor{"edge": {Shape: []int64{2, 2}, Ints: []int64{0, 40, 1, 41}},
		"edge_neg": {Shape: []int64{2, 2}, Ints: []int64{9, 5, 9, 71}}} // (0, 5) is a training edge
	if err := torchzip.Write(filepath.Join(dir, "split", "random", "valid.pt"), valid); err != nil {
		t.Fatal(err)
	}
	d, err := ImportLink(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Link; !slices.Equal(s.Valid, []int32{1, 41}) || !slices.Equal(s.ValidNeg, []int32{1, 71}) {
		t.Fatalf("valid %v, negatives %v; want (1, 41) with (1, 71)", s.Valid, s.ValidNeg)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestUndirected: the first occurrence of each undirected edge stays, in
// the order given; repeats in either direction and self loops go.
func TestUndirected(t *testing.T) {
	got := undirected([]int32{5, 1, 2, 2, 1, 5, 0, 3, 5, 1, 3, 0, 4, 1})
	if want := []int32{5, 1, 0, 3, 4, 1}; !slices.Equal(got, want) {
		t.Fatalf("undirected: %v, want %v", got, want)
	}
}
