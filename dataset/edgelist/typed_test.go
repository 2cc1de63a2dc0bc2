package edgelist

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/internal/typedtest"
	"github.com/fanout-gnn/fanout/graph/graphtest"
	"github.com/parquet-go/parquet-go"
)

// venueRow and venueEdge are the Parquet rows of the typed fixture's
// venues (ids only) and its published_in edges.
type venueRow struct {
	ID string `parquet:"id"`
}

type venueEdge struct {
	Src string `parquet:"src"`
	Dst string `parquet:"dst"`
}

// typedFixture writes a typed graph: papers p0..p5 (CSV: label i%2, a
// split column, numeric year and f), authors 10..12 (gzip TSV: a label
// column, which is not a feature, and h), venues v0, v1 (Parquet, ids
// only: no features); writes (author -> paper, CSV, with a repeat), cites
// (paper -> paper, gzip TSV, with a self loop), published_in (paper ->
// venue, Parquet).
func typedFixture(t *testing.T) TypedOptions {
	t.Helper()
	dir := t.TempDir()
	papers := writeText(t, dir, "paper.csv", "id,label,part,year,f\n"+
		"p0,0,train,2000,0.5\np1,1,train,2001,1.5\np2,0,valid,2002,2.5\np3,1,test,2003,3.5\np4,0,,2004,4.5\np5,1,,2005,5.5\n")
	authors := writeText(t, dir, "author.tsv.gz", "id\tlabel\th\n10\t1\t-1\n11\t0\t-2\n12\t1\t-3\n")
	venues := filepath.Join(dir, "venue.parquet")
	if err := parquet.WriteFile(venues, []venueRow{{"v0"}, {"v1"}}); err != nil {
		t.Fatal(err)
	}
	writes := writeText(t, dir, "writes.csv", "src,dst\n10,p0\n10,p1\n11,p1\n12,p5\n10,p0\n")
	cites := writeText(t, dir, "cites.tsv.gz", "src\tdst\np1\tp0\np2\tp0\np3\tp3\np5\tp4\n")
	published := filepath.Join(dir, "published.parquet")
	if err := parquet.WriteFile(published, []venueEdge{{"p0", "v0"}, {"p1", "v0"}, {"p4", "v1"}}); err != nil {
		t.Fatal(err)
	}
	return TypedOptions{
		Options: Options{Src: "src", Dst: "dst", ID: "id", Label: "label", Split: "part", Draw: draw, Threads: 2, Name: "typed"},
		Tables:  []NodeTable{{"paper", papers}, {"author", authors}, {"venue", venues}},
		Relations: []EdgeFiles{
			{"author", "writes", "paper", []string{writes}}, {"paper", "cites", "paper", []string{cites}},
			{"paper", "published_in", "venue", []string{published}},
		},
		Target: "paper",
	}
}

// relationRows lists each relation's name and rows.
func relationRows(d *dataset.Dataset) ([]string, [][][]int32) {
	var rows [][][]int32
	for _, r := range d.Relations {
		rows = append(rows, graphtest.Rows(r.Graph))
	}
	return typedtest.RelationNames(d), rows
}

func importTyped(t *testing.T, o TypedOptions) *dataset.Dataset {
	t.Helper()
	im, err := ImportTyped(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := im.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := im.Dataset.Validate(); err != nil {
		t.Fatal(err)
	}
	return im.Dataset
}

// TestImportTyped imports the fixture in memory and within a budget (the
// same graphs), with and without reverses.
func TestImportTyped(t *testing.T) {
	o := typedFixture(t)
	d := importTyped(t, o)
	paper, author, venue := d.Types[0], d.Types[1], d.Types[2]
	if paper.FeatDim != 2 || !slices.Equal(paper.Features[2:4], []float32{2001, 1.5}) || author.FeatDim != 1 ||
		!slices.Equal(author.Features, []float32{-1, -2, -3}) || venue.FeatDim != 0 || venue.Features != nil {
		t.Errorf("features: paper %v, author %v, venue width %d", paper.Features, author.Features, venue.FeatDim)
	}
	if !slices.Equal(paper.IDs.Strings, []string{"p0", "p1", "p2", "p3", "p4", "p5"}) || !slices.Equal(author.IDs.Ints, []int64{10, 11, 12}) ||
		!slices.Equal(venue.IDs.Strings, []string{"v0", "v1"}) {
		t.Errorf("ids %v %v %v", paper.IDs, author.IDs, venue.IDs)
	}
	if d.Target != 0 || d.FeatDim != 2 || d.NumClasses != 2 || !slices.Equal(d.Labels, []int32{0, 1, 0, 1, 0, 1}) ||
		!slices.Equal(d.Train, []int64{0, 1}) || !slices.Equal(d.Valid, []int64{2}) || !slices.Equal(d.Test, []int64{3}) || d.Name != "typed" {
		t.Errorf("target %d, labels %v, split %v %v %v", d.Target, d.Labels, d.Train, d.Valid, d.Test)
	}
	names, rows := relationRows(d)
	wantNames := []string{"(author, writes, paper)", "(paper, cites, paper)", "(paper, published_in, venue)",
		"(paper, rev_writes, author)", "(venue, rev_published_in, paper)"}
	wantRows := [][][]int32{
		{{0}, {0, 1}, {}, {}, {}, {2}},
		{{1, 2}, {0}, {0}, {}, {5}, {4}},
		{{0, 1}, {4}},
		{{0, 1}, {1}, {5}},
		{{0}, {0}, {}, {}, {1}, {}},
	}
	if !slices.Equal(names, wantNames) || !slices.EqualFunc(rows, wantRows, func(a, b [][]int32) bool { return slices.EqualFunc(a, b, slices.Equal) }) {
		t.Fatalf("relations %q %v, want %q %v", names, rows, wantNames, wantRows)
	}
	for _, noReverse := range []bool{false, true} {
		o.NoReverse, o.Memory, o.TempDir = noReverse, 0, ""
		inMemory := importTyped(t, o)
		o.Memory, o.TempDir = MinMemory, t.TempDir()
		bounded := importTyped(t, o)
		mn, mr := relationRows(inMemory)
		bn, br := relationRows(bounded)
		if !slices.Equal(mn, bn) || !slices.EqualFunc(mr, br, func(a, b [][]int32) bool { return slices.EqualFunc(a, b, slices.Equal) }) {
			t.Errorf("no reverse %v: bounded %q %v, in memory %q %v", noReverse, bn, br, mn, mr)
		}
		if want := map[bool]int{false: 5, true: 3}[noReverse]; len(mn) != want {
			t.Errorf("no reverse %v: %d relations, want %d", noReverse, len(mn), want)
		}
	}
}

// TestImportTypedRefusals: bad schemas and bad values, each error naming
// the flag or the file, row and column.
func TestImportTypedRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(o *TypedOptions)
		want string
	}{
		{"unknown type", func(o *TypedOptions) { o.Relations[0].Src = "editor" }, `--edges editor,writes,paper: type "editor" has no --nodes table`},
		{"two tables", func(o *TypedOptions) { o.Tables[2].Type = "author" }, "--nodes: type author has two tables"},
		{"target", func(o *TypedOptions) { o.Target = "venue2" }, `--target "venue2": want one of the types of --nodes ("paper, author, venue")`},
		{"relation twice", func(o *TypedOptions) { o.Relations[2] = o.Relations[1] }, "--edges paper,cites,paper is given twice"},
		{"type name", func(o *TypedOptions) { o.Tables[2].Type = "ven ue"; o.Relations[2].Dst = "ven ue" }, `--nodes: the type "ven ue" holds " "`},
		{"id of the wrong type", func(o *TypedOptions) { o.Relations[0].Files = o.Relations[1].Files },
			`cites.tsv.gz: row 1 (line 2), column "src": id "p1" is not in the node table`},
		{"features", func(o *TypedOptions) { o.Features = []string{"year", "h"} }, `paper.csv: no column "h" (--features)`},
	} {
		o := typedFixture(t)
		c.edit(&o)
		_, err := ImportTyped(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	o := typedFixture(t)
	o.Features = []string{"year", "f"}
	d := importTyped(t, o)
	if d.Types[1].FeatDim != 0 || d.Types[0].FeatDim != 2 {
		t.Errorf("--features year,f: author width %d (has neither: none), paper %d", d.Types[1].FeatDim, d.Types[0].FeatDim)
	}
	o.Tables[1].File = writeText(t, t.TempDir(), "author.csv", "id,year\n10,1\n11,2\n12,3\n") // year, but no f
	if _, err := ImportTyped(context.Background(), o); err == nil ||
		!strings.Contains(err.Error(), `author.csv: no column "f" (--features)`) || !strings.Contains(err.Error(), "every --features column, or none") {
		t.Errorf("some of --features: %v", err)
	}
}
