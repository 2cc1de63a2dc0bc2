package dataset

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/graph/graphtest"
)

// smallTyped is a typed dataset of three types: paper (5 vertices, 2
// features, the target: 3 classes, paper 4 unlabelled), author (3, no
// features, integer ids) and field (2, 1 feature, string ids); relations
// writes (author -> paper), cites (paper -> paper, with a self loop and a
// repeat) and has_topic (paper -> field, with a repeat), built with their
// reverses when reverse is set.
func smallTyped(t *testing.T, reverse bool) *Dataset {
	t.Helper()
	types := []VertexType{
		{Name: "paper", Count: 5, FeatDim: 2, Features: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{Name: "author", Count: 3, IDs: &NodeIDs{Ints: []int64{70, 71, 72}}},
		{Name: "field", Count: 2, FeatDim: 1, Features: []float32{-1, 1}, IDs: &NodeIDs{Strings: []string{"math", "cs"}}},
	}
	lists := []EdgeList{
		{Name: "writes", Src: 1, Dst: 0, From: []int32{0, 0, 1, 2, 2}, To: []int32{0, 1, 1, 3, 4}},
		{Name: "cites", Src: 0, Dst: 0, From: []int32{1, 2, 3, 3, 4, 2}, To: []int32{0, 0, 1, 3, 2, 0}},
		{Name: "has_topic", Src: 0, Dst: 2, From: []int32{0, 1, 2, 3, 4, 4}, To: []int32{0, 0, 1, 1, 1, 1}},
	}
	rels, err := BuildRelations(types, lists, RelationOptions{Reverse: reverse, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	return &Dataset{Name: "small", Source: "test", Types: types, Relations: rels, Target: 0, FeatDim: 2, NumClasses: 3,
		Labels: []int32{0, 1, 2, 0, -1}, Train: []int64{0, 1}, Valid: []int64{2}, Test: []int64{3},
		Preprocessing: TypedSteps(reverse)}
}

func TestBuildRelationsReverse(t *testing.T) {
	d := smallTyped(t, true)
	var names []string
	for _, r := range d.Relations {
		names = append(names, d.RelationName(r))
	}
	wantNames := []string{"(author, writes, paper)", "(paper, cites, paper)", "(paper, has_topic, field)",
		"(paper, rev_writes, author)", "(field, rev_has_topic, paper)"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("relations %q, want %q", names, wantNames)
	}
	want := [][][]int32{
		{{0}, {0, 1}, {}, {2}, {2}},        // writes: paper <- authors
		{{1, 2}, {0, 3}, {0, 4}, {1}, {2}}, // cites made undirected, the self loop 3->3 and the repeat dropped
		{{0, 1}, {2, 3, 4}},                // has_topic: field <- papers
		{{0, 1}, {1}, {3, 4}},              // rev_writes: author <- papers
		{{0}, {0}, {1}, {1}, {1}},          // rev_has_topic: paper <- fields
	}
	for i, r := range d.Relations {
		if got := graphtest.Rows(r.Graph); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: rows %v, want %v", names[i], got, want[i])
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	plain := smallTyped(t, false)
	if len(plain.Relations) != 3 || !reflect.DeepEqual(graphtest.Rows(plain.Relations[1].Graph), [][]int32{{1, 2}, {3}, {4}, {}, {}}) {
		t.Errorf("without reverses: %d relations, cites %v", len(plain.Relations), graphtest.Rows(plain.Relations[1].Graph))
	}
}

func TestAddReverseRefusesTakenName(t *testing.T) {
	d := smallTyped(t, false)
	d.Relations = append(d.Relations, Relation{Name: "rev_writes", Src: 0, Dst: 1, Graph: transpose(d.Relations[0].Graph, 3, 1)})
	_, err := AddReverse(d.Types, d.Relations, 1)
	if err == nil || !strings.Contains(err.Error(), "(paper, rev_writes, author), which is already a relation") {
		t.Fatalf("error %v", err)
	}
}

// TestTransposeAnyThreads compares transpose and undirected with the
// graph builder's result on random relations, at several thread counts.
func TestTransposeAnyThreads(t *testing.T) {
	const rowsN, colsN, m = 300, 200, 5000
	var from, to []int32
	for i := range m {
		from = append(from, int32((i*7919)%colsN))
		to = append(to, int32((i*104729+i/3)%rowsN))
	}
	types := []VertexType{{Name: "a", Count: colsN}, {Name: "b", Count: rowsN}}
	rels, err := BuildRelations(types, []EdgeList{{Name: "r", Src: 0, Dst: 1, From: from, To: to}}, RelationOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := graph.FromEdges(max(rowsN, colsN), from, to, graph.BuildOptions{Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	want.NumNodes, want.Indptr = colsN, want.Indptr[:colsN+1]
	for _, threads := range []int{1, 2, 3, 8} {
		if got := transpose(rels[0].Graph, colsN, threads); !reflect.DeepEqual(got, want) {
			t.Fatalf("%d threads: transpose differs from the builder's", threads)
		}
	}
	same := []EdgeList{{Name: "s", Src: 0, Dst: 0, From: from, To: to}}
	for i := range to {
		same[0].To[i] %= colsN
	}
	plain, err := BuildRelations(types, same, RelationOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	sym, err := graph.FromEdges(colsN, same[0].From, same[0].To, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 3} {
		if got := undirected(plain[0].Graph, threads); !reflect.DeepEqual(got, sym) {
			t.Fatalf("%d threads: undirected differs from the builder's symmetrized graph", threads)
		}
	}
}

func TestOneTypeAsTyped(t *testing.T) {
	d := ring(10)
	d.IDs = &NodeIDs{Ints: make([]int64, 10)}
	types, rels := d.VertexTypes(), d.EdgeTypes()
	if d.Typed() || len(types) != 1 || len(rels) != 1 {
		t.Fatalf("typed %v, %d types, %d relations", d.Typed(), len(types), len(rels))
	}
	ty, r := types[0], rels[0]
	if ty.Name != OneTypeName || ty.Count != 10 || ty.FeatDim != 3 || &ty.Features[0] != &d.Features[0] || ty.IDs != d.IDs {
		t.Errorf("type %+v", ty)
	}
	if r.Name != OneRelationName || r.Src != 0 || r.Dst != 0 || r.Graph != d.Graph {
		t.Errorf("relation %+v", r)
	}
	if d.NumVertices() != 10 || d.NumEdges() != 20 || d.TypeIndex(OneTypeName) != 0 {
		t.Errorf("vertices %d, edges %d", d.NumVertices(), d.NumEdges())
	}
	typed := smallTyped(t, true)
	if !typed.Typed() || typed.NumVertices() != 10 || typed.NumEdges() != 5+8+5+5+5 || typed.TypeIndex("field") != 2 {
		t.Errorf("typed: vertices %d, edges %d", typed.NumVertices(), typed.NumEdges())
	}
}

// roundTrip writes d to dir and opens it again, closed at the test's end.
func roundTrip(t *testing.T, dir string, d *Dataset) *Dataset {
	t.Helper()
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	got, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { got.Close() })
	return got
}

func TestTypedWriteOpenRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small")
	want := smallTyped(t, true)
	got := roundTrip(t, dir, want)
	for i := range want.Types {
		w, g := want.Types[i], got.Types[i]
		if g.Name != w.Name || g.Count != w.Count || g.FeatDim != w.FeatDim || !reflect.DeepEqual(g.Features, w.Features) || g.IDs != nil {
			t.Errorf("type %d: got %+v, want %+v", i, g, w)
		}
	}
	for i := range want.Relations {
		w, g := want.Relations[i], got.Relations[i]
		if g.Name != w.Name || g.Src != w.Src || g.Dst != w.Dst || !reflect.DeepEqual(*g.Graph, *w.Graph) {
			t.Errorf("relation %d: got %s %v, want %s %v", i, got.RelationName(g), graphtest.Rows(g.Graph), want.RelationName(w), graphtest.Rows(w.Graph))
		}
	}
	if got.Target != 0 || got.FeatDim != 2 || got.NumClasses != 3 || !slices.Equal(got.Labels, want.Labels) ||
		!slices.Equal(got.Train, want.Train) || !slices.Equal(got.Valid, want.Valid) || !slices.Equal(got.Test, want.Test) ||
		!slices.Equal(got.Preprocessing, want.Preprocessing) || got.Graph != nil {
		t.Errorf("target part: %+v", got)
	}
	ids, err := ReadTypeIDs(dir, "field")
	if err != nil || !slices.Equal(ids.Strings, []string{"math", "cs"}) {
		t.Errorf("field ids %v, %v", ids, err)
	}
	if ids, err := ReadTypeIDs(dir, "author"); err != nil || !slices.Equal(ids.Ints, []int64{70, 71, 72}) {
		t.Errorf("author ids %v, %v", ids, err)
	}
	if ids, err := ReadIDs(dir); ids != nil || err != nil {
		t.Errorf("the target's ids: %v, %v; paper has none", ids, err)
	}
	if _, err := ReadTypeIDs(dir, "venue"); err == nil || !strings.Contains(err.Error(), `no vertex type "venue"`) {
		t.Errorf("unknown type: %v", err)
	}
	if gi, wi := got.Info(), want.Info(); !reflect.DeepEqual(gi.Relations, wi.Relations) || gi.NumEdges != wi.NumEdges {
		t.Errorf("Info differs: %+v vs %+v", gi, wi)
	}
	if err := Write(dir, ring(10)); err != nil {
		t.Fatalf("replacing a typed dataset: %v", err)
	}
}

func TestTypedInfo(t *testing.T) {
	d := smallTyped(t, true)
	s := d.Info().String()
	for _, want := range []string{
		"vertices   10 of 3 types",
		"  paper              5  2 float32 features (40 B)  target",
		"  author             3  no features (a learned embedding)  ids in types/author/ids.npy",
		"  field              2  1 float32 features (8 B)  ids in types/field/ids.txt",
		"edges      28 in 5 relations (rows: destinations)",
		"  (paper, cites, paper) 8 edges; in-degree mean 1.60  p50 2  p90 2  p99 2  max 2; 0.0% of paper without one",
		"  (author, writes, paper) 5 edges; in-degree mean 1.00  p50 1  p90 2  p99 2  max 2; 20.0% of paper without one",
		"classes    3 (target paper)",
		"labelled   4 (80.0% of paper)",
		"split      train 2  valid 1  test 1",
	} {
		if !strings.Contains(s, want+"\n") {
			t.Errorf("info lacks %q:\n%s", want, s)
		}
	}
}

func TestTypedBFloat16RoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bf")
	d := smallTyped(t, false)
	d.RoundFeatures()
	if d.FeatureBytes() != 2*(10+2) || d.Types[2].Features != nil || d.Types[2].FeaturesBF16 == nil {
		t.Fatalf("rounded: %d bytes, %+v", d.FeatureBytes(), d.Types[2])
	}
	got := roundTrip(t, dir, d)
	if !reflect.DeepEqual(got.Types[0].FeaturesBF16, d.Types[0].FeaturesBF16) || got.FeatureDType().String() != "bfloat16" {
		t.Errorf("bfloat16 tables: %v", got.Types[0])
	}
	got.WidenFeatures()
	if !slices.Equal(got.Types[0].Features, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("widened %v", got.Types[0].Features)
	}
}

// TestCheckFeatureless: a featureless type whose count its edges do not
// support (more than 16 vertices per edge end, plus 2^20) is refused; a
// type with features is left to its table.
func TestCheckFeatureless(t *testing.T) {
	types := []VertexType{{Name: "a", Count: 1<<20 + 32}, {Name: "b", Count: 1 << 30, FeatDim: 1}}
	lists := []EdgeList{{Name: "r", Src: 0, Dst: 1, From: []int32{0, 1}, To: []int32{0, 0}}}
	if err := CheckFeatureless(types, lists); err != nil {
		t.Fatal(err)
	}
	types[0].Count++
	err := CheckFeatureless(types, lists)
	if err == nil || !strings.Contains(err.Error(), "type a has no features and 1048609 vertices, but its relations name it 2 times") {
		t.Fatalf("error %v", err)
	}
}
