package linksplit

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/graph"
)

// tiny is a symmetric dataset of 300 vertices: a ring plus chords, so
// that every vertex has room for negatives.
func tiny(t *testing.T) *dataset.Dataset {
	t.Helper()
	const n = 300
	var src, dst []int32
	for i := int32(0); i < n; i++ {
		src = append(src, i, i)
		dst = append(dst, (i+1)%n, (i*7+3)%n)
	}
	g, err := graph.FromEdges(n, src, dst, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	return &dataset.Dataset{Name: "ring", Graph: g, Symmetric: true, Features: make([]float32, n), FeatDim: 1,
		Labels: make([]int32, n), NumClasses: 1, Train: []int64{0}}
}

func TestParse(t *testing.T) {
	f, err := Parse("0.85, 0.05,0.1")
	if err != nil || f != (Fractions{0.85, 0.05, 0.1}) {
		t.Fatalf("Parse = %+v, %v", f, err)
	}
	for in, want := range map[string]string{
		"0.8,0.1":         "TRAIN,VALID,TEST",
		"0.8,0.1,x":       "fraction 3",
		"0.8,0.1,0.2":     "sum to",
		"0,0.5,0.5":       "training fraction is 0",
		"1.5,-0.25,-0.25": "fraction 1",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

// edgeSet is the undirected edges of flat pairs as (min, max) keys.
func edgeSet(p []int32) map[[2]int32]bool {
	s := map[[2]int32]bool{}
	for i := 0; i+1 < len(p); i += 2 {
		s[[2]int32{min(p[i], p[i+1]), max(p[i], p[i+1])}] = true
	}
	return s
}

func TestApplySplitsWithoutLeakage(t *testing.T) {
	ds := tiny(t)
	orig := ds.Graph
	src, _ := undirected(orig)
	m := len(src)
	if err := Apply(ds, Options{Fractions: Fractions{0.8, 0.1, 0.1}, Negatives: 3, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	s := ds.Link
	if got := dataset.Pairs(s.Valid); got != int(0.1*float64(m)) {
		t.Errorf("%d validation edges of %d, want %d", got, m, int(0.1*float64(m)))
	}
	if n := dataset.Pairs(s.Train) + dataset.Pairs(s.Valid) + dataset.Pairs(s.Test); n != m {
		t.Errorf("the sets hold %d edges, the graph %d", n, m)
	}
	train, held := edgeSet(s.Train), edgeSet(append(slices.Clone(s.Valid), s.Test...))
	if len(train)+len(held) != m {
		t.Errorf("%d + %d distinct edges, want %d (an edge in two sets?)", len(train), len(held), m)
	}
	if got := ds.Graph.NumEdges(); got != 2*int64(len(train)) {
		t.Errorf("the message-passing graph stores %d edges, want both directions of %d", got, len(train))
	}
	for e := range held {
		if dataset.HasEdge(ds.Graph, e[0], e[1]) || dataset.HasEdge(ds.Graph, e[1], e[0]) {
			t.Fatalf("held-out edge %v is in the message-passing graph", e)
		}
	}
	if got := dataset.Pairs(s.TestNeg); got != 3*dataset.Pairs(s.Test) {
		t.Fatalf("%d test negatives for %d edges, want 3 each", got, dataset.Pairs(s.Test))
	}
	for i := 0; i < dataset.Pairs(s.TestNeg); i++ {
		u, w := s.TestNeg[2*i], s.TestNeg[2*i+1]
		if u != s.Test[2*(i/3)] || u == w || dataset.HasEdge(orig, u, w) {
			t.Fatalf("test negative %d (%d, %d) is an edge, a self pair, or not its positive's source", i, u, w)
		}
	}
	// Seeded: the same split again, another with another seed.
	again, other := tiny(t), tiny(t)
	if err := Apply(again, Options{Fractions: Fractions{0.8, 0.1, 0.1}, Negatives: 3, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	if err := Apply(other, Options{Fractions: Fractions{0.8, 0.1, 0.1}, Negatives: 3, Seed: 8}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Link.Test, s.Test) || !slices.Equal(again.Link.TestNeg, s.TestNeg) {
		t.Error("the same seed gave another split")
	}
	if slices.Equal(other.Link.Test, s.Test) {
		t.Error("another seed gave the same split")
	}
}

func TestWriteOpenAndValidate(t *testing.T) {
	ds := tiny(t)
	if err := Apply(ds, Options{Fractions: Fractions{0.85, 0.05, 0.1}, Negatives: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tiny-link")
	if err := dataset.Write(dir, ds); err != nil {
		t.Fatal(err)
	}
	got, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Link == nil || !slices.Equal(got.Link.Valid, ds.Link.Valid) || !slices.Equal(got.Link.TestNeg, ds.Link.TestNeg) || got.Link.Negatives != 2 {
		t.Fatalf("opened link split differs from the written one")
	}
	info := got.Info().String()
	want := "links      train "
	if !strings.Contains(info, want) || !strings.Contains(info, "2 fixed negatives") {
		t.Errorf("info lacks the link line:\n%s", info)
	}
	got.Close()

	// A validation edge put back into the training set: it is not in the
	// graph, and Open names the file and the pair.
	bad := slices.Clone(ds.Link.Train)
	bad[0], bad[1] = ds.Link.Valid[0], ds.Link.Valid[1]
	if err := npy.WriteFile(filepath.Join(dir, dataset.LinkTrainFile), bad, []int64{int64(len(bad) / 2), 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Open(dir); err == nil || !strings.Contains(err.Error(), dataset.LinkTrainFile) || !strings.Contains(err.Error(), "not an edge") {
		t.Errorf("Open with a held-out edge among the training edges: %v", err)
	}
	// A test edge that is also in the graph (a leak).
	leak := slices.Clone(ds.Link.Test)
	leak[0], leak[1] = ds.Link.Train[0], ds.Link.Train[1]
	if err := npy.WriteFile(filepath.Join(dir, dataset.LinkTrainFile), ds.Link.Train, []int64{int64(len(ds.Link.Train) / 2), 2}); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(filepath.Join(dir, dataset.LinkTestFile), leak, []int64{int64(len(leak) / 2), 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Open(dir); err == nil || !strings.Contains(err.Error(), "message-passing graph") {
		t.Errorf("Open with a test edge in the graph: %v", err)
	}
	// An id out of range.
	leak[0] = int32(ds.Graph.NumNodes)
	if err := npy.WriteFile(filepath.Join(dir, dataset.LinkTestFile), leak, []int64{int64(len(leak) / 2), 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Open(dir); err == nil || !strings.Contains(err.Error(), "want [0,") {
		t.Errorf("Open with a vertex out of range: %v", err)
	}
	os.RemoveAll(dir)
}

// TestRadixSort: keys in every 16-bit digit, and repeated, come out in
// key order, equal keys in their first order (the shuffle's ties by
// index).
func TestRadixSort(t *testing.T) {
	var in []keyed
	for i := range 500 {
		k := uint64(i*7919%97) << (16 * (i % 4)) // a key with one digit set, repeats among them
		in = append(in, keyed{k, i})
	}
	want := slices.Clone(in)
	slices.SortStableFunc(want, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	if got := radixSort(slices.Clone(in)); !slices.Equal(got, want) {
		t.Errorf("radix sort differs from a stable sort by key")
	}
}

// TestApplyRefusesTyped: a typed dataset's relations get no link task
// (yet), and the refusal says so instead of calling it asymmetric.
func TestApplyRefusesTyped(t *testing.T) {
	ds := tiny(t)
	ds.Types = []dataset.VertexType{{Name: "a", Count: 300}}
	ds.Relations = []dataset.Relation{{Name: "r", Graph: ds.Graph}}
	ds.Graph = nil
	err := Apply(ds, Options{Fractions: Fractions{0.85, 0.05, 0.1}, Negatives: 2, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "ring is a typed dataset") {
		t.Fatalf("error %v", err)
	}
}
