package ogb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
	"github.com/fanout-gnn/fanout/graph/graphtest"
)

var magFixture = ogbtest.MAG{Papers: 6, Authors: 4, Institutions: 2, Fields: 3, Classes: 3}

// naiveRows is the graph of edges whose rows are the destinations: each
// row's sources sorted, once; self loops dropped where within, and both
// directions where undirected.
func naiveRows(edges [][2]int, rows int, within, undirected bool) [][]int32 {
	sets := make([]map[int32]bool, rows)
	for i := range sets {
		sets[i] = map[int32]bool{}
	}
	for _, e := range edges {
		if within && e[0] == e[1] {
			continue
		}
		sets[e[1]][int32(e[0])] = true
		if undirected {
			sets[e[0]][int32(e[1])] = true
		}
	}
	out := make([][]int32, rows)
	for v, s := range sets {
		out[v] = []int32{}
		for u := range s {
			out[v] = append(out[v], u)
		}
		slices.Sort(out[v])
	}
	return out
}

func TestImportTyped(t *testing.T) {
	dir := ogbtest.WriteMAG(t, filepath.Join(t.TempDir(), "ogbn_mag"), magFixture)
	d, err := Import(dir, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ty := range d.Types {
		types = append(types, ty.Name)
	}
	if !slices.Equal(types, []string{"author", "field_of_study", "institution", "paper"}) || d.Target != 3 || d.Name != "ogbn_mag" {
		t.Fatalf("types %q, target %d, name %q", types, d.Target, d.Name)
	}
	paper := d.Types[3]
	if paper.FeatDim != 3 || !slices.Equal(paper.Features[6:9], []float32{2, -2, 0.5}) || d.Types[0].Features != nil || d.FeatDim != 3 {
		t.Errorf("paper features %v (width %d)", paper.Features, paper.FeatDim)
	}
	if !slices.Equal(d.Labels, []int32{0, 1, 2, 0, 1, -1}) || d.NumClasses != 3 ||
		!slices.Equal(d.Train, []int64{0, 1}) || !slices.Equal(d.Valid, []int64{2}) || !slices.Equal(d.Test, []int64{3}) {
		t.Errorf("labels %v (%d classes), split %v %v %v", d.Labels, d.NumClasses, d.Train, d.Valid, d.Test)
	}
	edges := magFixture.Edges()
	want := []struct {
		name   string
		folder string
		rows   int
		flip   bool // a reverse: rows are the folder's sources
	}{
		{"(author, affiliated_with, institution)", "author___affiliated_with___institution", 2, false},
		{"(author, writes, paper)", "author___writes___paper", 6, false},
		{"(paper, cites, paper)", "paper___cites___paper", 6, false},
		{"(paper, has_topic, field_of_study)", "paper___has_topic___field_of_study", 3, false},
		{"(institution, rev_affiliated_with, author)", "author___affiliated_with___institution", 4, true},
		{"(paper, rev_writes, author)", "author___writes___paper", 4, true},
		{"(field_of_study, rev_has_topic, paper)", "paper___has_topic___field_of_study", 6, true},
	}
	if len(d.Relations) != len(want) {
		t.Fatalf("%d relations, want %d", len(d.Relations), len(want))
	}
	for i, w := range want {
		r := d.Relations[i]
		e := edges[w.folder]
		if w.flip {
			e = flipped(e)
		}
		cites := w.folder == "paper___cites___paper"
		if got := d.RelationName(r); got != w.name || !slices.EqualFunc(graphtest.Rows(r.Graph), naiveRows(e, w.rows, cites, cites), slices.Equal) {
			t.Errorf("relation %d: %s %v, want %s %v", i, got, graphtest.Rows(r.Graph), w.name, naiveRows(e, w.rows, cites, cites))
		}
	}
	plain, err := Import(dir, Options{NoReverse: true})
	if err != nil || len(plain.Relations) != 4 || plain.Relations[2].Graph.NumEdges() != 12 {
		t.Fatalf("without reverses: %v", err)
	}
	out := filepath.Join(t.TempDir(), "mag")
	if err := dataset.Write(out, d); err != nil {
		t.Fatal(err)
	}
	again, err := dataset.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.NumEdges() != d.NumEdges() || !slices.Equal(again.Types[3].Features, paper.Features) {
		t.Errorf("written and opened: %d edges, want %d", again.NumEdges(), d.NumEdges())
	}
}

// flipped swaps each edge's ends.
func flipped(edges [][2]int) [][2]int {
	out := make([][2]int, len(edges))
	for i, e := range edges {
		out[i] = [2]int{e[1], e[0]}
	}
	return out
}

// TestImportTypedBadInput damages one file of the fixture: the error names
// the file and what is wrong.
func TestImportTypedBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		opt    Options
		want   string
	}{
		{"edge out of range", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/relations/author___writes___paper/edge.csv.gz", "0,0\n0,6\n")
			rewrite(t, dir, "raw/relations/author___writes___paper/num-edge-list.csv.gz", "2\n")
		}, Options{}, "edge.csv.gz: line 2: field 2: vertex id 6 is out of range [0, 6)"},
		{"edge count", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/relations/paper___cites___paper/num-edge-list.csv.gz", "3\n")
		}, Options{}, "paper___cites___paper/edge.csv.gz: line 4: more than the 3 edges that num-edge-list announces"},
		{"unknown type", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/relations/venue___hosts___paper/edge.csv.gz", "0,0\n")
		}, Options{}, "venue___hosts___paper: a relation between types that num-node-dict does not list"},
		{"folder name", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/relations/paper_cites_paper/edge.csv.gz", "0,0\n")
		}, Options{}, "paper_cites_paper: want a folder named source___relation___destination"},
		{"count", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/num-node-dict.csv.gz", "author,field_of_study,institution,paper\n4,3,2,x\n")
		}, Options{}, `num-node-dict.csv.gz: the count of paper is "x"`},
		{"type name", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/num-node-dict.csv.gz", "author,field.of.study,institution,paper\n4,3,2,6\n")
		}, Options{}, `type 2 "field.of.study" holds "."`},
		{"feature rows", func(t *testing.T, dir string) {
			rewrite(t, dir, "raw/node-feat/paper/node-feat.csv.gz", "1,2,3\n")
		}, Options{}, "node-feat.csv.gz: 1 rows, but num-node-dict announces 6 vertices"},
		{"split", func(t *testing.T, dir string) {
			rewrite(t, dir, "split/time/paper/test.csv.gz", "9\n")
		}, Options{}, "paper/test.csv.gz: line 1: vertex id 9 is out of range [0, 6)"},
		{"target", func(t *testing.T, dir string) {}, Options{Target: "author"}, `no labels of the type "author" (labelled: "paper")`},
		{"symmetrize", func(t *testing.T, dir string) {}, Options{Symmetrize: true}, "get their reverses (rev_<relation>) unless --no-reverse"},
	} {
		dir := ogbtest.WriteMAG(t, t.TempDir(), magFixture)
		c.damage(t, dir)
		_, err := Import(dir, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	tiny := writeTree(t, "tiny", tinyFiles())
	if _, err := Import(tiny, Options{NoReverse: true}); err == nil || !strings.Contains(err.Error(), "a graph of one type: --target and --no-reverse are for typed folders") {
		t.Errorf("--no-reverse on a graph of one type: %v", err)
	}
}

// rewrite replaces (or adds) a file of the fixture with text, compressed.
func rewrite(t *testing.T, dir, file, text string) {
	t.Helper()
	path := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, gz(t, text), 0o644); err != nil {
		t.Fatal(err)
	}
}
