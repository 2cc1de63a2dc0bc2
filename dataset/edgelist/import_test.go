package edgelist

import (
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/parquet-go/parquet-go"
)

// writeText writes a fixture file; a name ending in .gz is gzipped.
func writeText(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(name, ".gz") {
		gz := gzip.NewWriter(f)
		if _, err := gz.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if _, err := f.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	return path
}

// ring is a fixture graph: n vertices named name(i), class i%2, edges
// i -> i+1 around a ring plus one self loop and one repeated edge.
func ringCSV(n int, name func(int) string) (nodes, edges string) {
	var nb, eb strings.Builder
	nb.WriteString("id,label,x,y,note\n")
	for i := range n {
		fmt.Fprintf(&nb, "%s,%d,%d,%d.5,v%d\n", name(i), i%2, i, i, i)
	}
	eb.WriteString("dst,src\n")
	for i := range n {
		fmt.Fprintf(&eb, "%s,%s\n", name((i+1)%n), name(i))
	}
	fmt.Fprintf(&eb, "%s,%s\n%s,%s\n", name(0), name(0), name(1), name(0))
	return nb.String(), eb.String()
}

// draw is a split small enough for the fixtures.
var draw = dataset.SplitOptions{Seed: 1, TrainPerClass: 2, Valid: 2, Test: 2}

func opts(nodes string) Options {
	return Options{Src: "src", Dst: "dst", Nodes: nodes, ID: "id", Label: "label", Draw: draw}
}

// checkRing checks a dataset imported from ringCSV's fixture.
func checkRing(t *testing.T, d *dataset.Dataset, n int) {
	t.Helper()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Graph.NumNodes != int64(n) || d.Graph.NumEdges() != int64(2*n) {
		t.Fatalf("%d vertices, %d edges; want %d, %d (a symmetric ring, the self loop and the repeat dropped)", d.Graph.NumNodes, d.Graph.NumEdges(), n, 2*n)
	}
	if d.FeatDim != 2 || d.Features[2*3] != 3 || d.Features[2*3+1] != 3.5 {
		t.Fatalf("features: dim %d, row 3 %v; want x, y = 3, 3.5", d.FeatDim, d.Features[6:8])
	}
	if d.NumClasses != 2 || d.Labels[3] != 1 {
		t.Fatalf("classes %d, label of vertex 3 %d", d.NumClasses, d.Labels[3])
	}
	if len(d.Train) != 4 || len(d.Valid) != 2 || len(d.Test) != 2 {
		t.Fatalf("split %d/%d/%d, want 4/2/2", len(d.Train), len(d.Valid), len(d.Test))
	}
}

func TestImportCSVStringIDs(t *testing.T) {
	dir := t.TempDir()
	name := func(i int) string { return fmt.Sprintf("user %c%d", 'a'+i%3, i) }
	nodes, edges := ringCSV(10, name)
	np := writeText(t, dir, "nodes.csv", nodes)
	ep := writeText(t, dir, "edges.csv", edges)
	d, err := Import([]string{ep}, opts(np))
	if err != nil {
		t.Fatal(err)
	}
	checkRing(t, d, 10)
	if d.IDs.Strings == nil || d.IDs.Strings[4] != name(4) {
		t.Fatalf("ids %+v, want the strings of the node table", d.IDs)
	}
	if !slices.Contains(d.Graph.Neighbors32(4), 5) {
		t.Fatalf("vertex 4's neighbours %v lack 5", d.Graph.Neighbors32(4))
	}
}

func TestImportIntIDsGzipGlobTSV(t *testing.T) {
	dir := t.TempDir()
	base := int64(1) << 60 // beyond float64's exact integers
	name := func(i int) string { return fmt.Sprint(base + int64(i)) }
	nodes, edges := ringCSV(12, name)
	np := writeText(t, dir, "nodes.tsv.gz", strings.ReplaceAll(nodes, ",", "\t"))
	lines := strings.SplitAfter(edges, "\n")
	writeText(t, dir, "part-0.csv.gz", lines[0]+strings.Join(lines[1:7], ""))
	writeText(t, dir, "part-1.csv", lines[0]+strings.Join(lines[7:], ""))
	files, err := Expand([]string{filepath.Join(dir, "part-*")})
	if err != nil || len(files) != 2 {
		t.Fatalf("Expand: %v, %v", files, err)
	}
	d, err := Import(files, opts(np))
	if err != nil {
		t.Fatal(err)
	}
	checkRing(t, d, 12)
	if d.IDs.Ints == nil || d.IDs.Ints[11] != base+11 {
		t.Fatalf("ids %+v, want the integers of the node table", d.IDs)
	}
	if _, err := Expand([]string{filepath.Join(dir, "none-*")}); err == nil || !strings.Contains(err.Error(), "matches no file") {
		t.Fatalf("a glob matching nothing: %v", err)
	}
}

type parquetNode struct {
	ID    int64     `parquet:"id"`
	Label int64     `parquet:"label"`
	Emb   []float32 `parquet:"emb,list"`
	W     float64   `parquet:"w"`
	Split string    `parquet:"part"`
	Note  string    `parquet:"note"`
}

type parquetEdge struct {
	Src int64 `parquet:"src"`
	Dst int64 `parquet:"dst"`
}

func TestImportParquetListFeaturesAndSplitColumn(t *testing.T) {
	dir := t.TempDir()
	n := 8
	var ns []parquetNode
	var es []parquetEdge
	for i := range n {
		ns = append(ns, parquetNode{ID: int64(100 * i), Label: int64(i % 2), Emb: []float32{float32(i), 1, 2}, W: 0.5,
			Split: []string{"train", "valid", "test", ""}[i%4], Note: "x"})
		es = append(es, parquetEdge{Src: int64(100 * i), Dst: int64(100 * ((i + 1) % n))})
	}
	np := filepath.Join(dir, "nodes.parquet")
	ep := filepath.Join(dir, "edges.parquet")
	if err := parquet.WriteFile(np, ns); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(ep, es); err != nil {
		t.Fatal(err)
	}
	o := opts(np)
	o.Split = "part"
	d, err := Import([]string{ep}, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.FeatDim != 4 || !slices.Equal(d.Features[4*3:4*4], []float32{3, 1, 2, 0.5}) {
		t.Fatalf("dim %d, row 3 %v; want emb and w: [3 1 2 0.5]", d.FeatDim, d.Features[12:16])
	}
	if !slices.Equal(d.Train, []int64{0, 4}) || !slices.Equal(d.Valid, []int64{1, 5}) || !slices.Equal(d.Test, []int64{2, 6}) {
		t.Fatalf("split %v %v %v", d.Train, d.Valid, d.Test)
	}
	if d.IDs.Ints[3] != 300 || d.Graph.NumEdges() != int64(2*n) {
		t.Fatalf("ids %v, %d edges", d.IDs.Ints, d.Graph.NumEdges())
	}
	o.Features = []string{"emb"}
	if d, err = Import([]string{ep}, o); err != nil || d.FeatDim != 3 {
		t.Fatalf("--features emb: %v, dim %d", err, d.FeatDim)
	}
}

func TestImportCSVListColumn(t *testing.T) {
	dir := t.TempDir()
	np := writeText(t, dir, "nodes.csv", "id,label,emb\na,0,\"[1, 2]\"\nb,1,[3 4]\nc,0,\"[5,6]\"\nd,1,[7 8]\n")
	ep := writeText(t, dir, "edges.csv", "src,dst\na,b\nb,c\n")
	o := opts(np)
	o.Draw = dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}
	d, err := Import([]string{ep}, o)
	if err != nil {
		t.Fatal(err)
	}
	if d.FeatDim != 2 || !slices.Equal(d.Features, []float32{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("dim %d, features %v", d.FeatDim, d.Features)
	}
}

// TestMalformed checks that every bad input is one error naming the file,
// the row and the column.
func TestMalformed(t *testing.T) {
	goodNodes := "id,label,x\na,0,1\nb,1,2\nc,0,3\nd,1,4\n"
	goodEdges := "src,dst\na,b\nc,d\n"
	for _, c := range []struct {
		name, nodes, edges string
		o                  func(*Options)
		want               []string // substrings of the message
		row                int64    // the RowError's row; 0: no RowError
		col                string
	}{
		{name: "non-numeric feature", nodes: "id,label,x\na,0,1\nb,1,two\n", want: []string{"nodes.csv", "features", `"two" is not a number`}, row: 2, col: "x"},
		{name: "unknown edge id", edges: "src,dst\na,b\nc,zz\n", want: []string{"edges.csv", `id "zz" is not in the node table`}, row: 2, col: "dst"},
		{name: "missing edge column", edges: "from,dst\na,b\n", want: []string{"edges.csv", `no column "src" (--src)`, "from, dst"}},
		{name: "missing id column", o: func(o *Options) { o.ID = "key" }, want: []string{"nodes.csv", `no column "key" (--id)`}},
		{name: "repeated id", nodes: "id,label,x\na,0,1\nb,1,2\na,0,3\n", want: []string{`id "a" repeats that of row 1`}, row: 3, col: "id"},
		{name: "bad label", nodes: "id,label,x\na,0,1\nb,cat,2\n", want: []string{`label "cat" is not an integer`}, row: 2, col: "label"},
		{name: "short row", nodes: "id,label,x\na,0,1\nb,1\n", want: []string{"nodes.csv", "wrong number of fields", "line 3"}, row: 2},
		{name: "empty edge id", edges: "src,dst\na,b\n,d\n", want: []string{"empty"}, row: 2, col: "src"},
		{name: "list lengths", nodes: "id,label,e\na,0,[1 2]\nb,1,[1]\n", want: []string{"1 feature values, but row 1 has 2"}, row: 2, col: "e"},
		{name: "bad split", nodes: "id,label,x,s\na,0,1,train\nb,1,2,tset\n", o: func(o *Options) { o.Split = "s" }, want: []string{`split "tset"`}, row: 2, col: "s"},
		{name: "two masks", nodes: "id,label,x,tr,va,te\na,0,1,1,0,0\nb,1,2,true,true,\n", o: func(o *Options) { o.Split = "tr,va,te" }, want: []string{`in two splits ("tr" and "va")`}, row: 2, col: "va"},
		{name: "bad mask", nodes: "id,label,x,tr,va,te\na,0,1,1,0,0\nb,1,2,yes,,\n", o: func(o *Options) { o.Split = "tr,va,te" }, want: []string{`mask "yes"`}, row: 2, col: "tr"},
		{name: "two split columns", o: func(o *Options) { o.Split = "x,label" }, want: []string{"want one column"}},
		{name: "infinite feature", nodes: "id,label,x\na,0,1\nb,1,inf\n", want: []string{"not a finite float32"}, row: 2, col: "x"},
		{name: "empty node table", nodes: "id,label,x\n", want: []string{"no rows"}},
		{name: "split too large", o: func(o *Options) { o.Draw = dataset.SplitOptions{} }, want: []string{"choose smaller split sizes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			nodes, edges := cmp.Or(c.nodes, goodNodes), cmp.Or(c.edges, goodEdges)
			o := opts(writeText(t, dir, "nodes.csv", nodes))
			o.Draw = dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}
			if c.o != nil {
				c.o(&o)
			}
			_, err := Import([]string{writeText(t, dir, "edges.csv", edges)}, o)
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var re *RowError
			if c.row == 0 {
				return
			}
			if !errors.As(err, &re) || re.Row != c.row || re.Column != c.col {
				t.Errorf("error %q: want row %d, column %q", err, c.row, c.col)
			}
		})
	}
}

func TestDamagedParquet(t *testing.T) {
	dir := t.TempDir()
	np := filepath.Join(dir, "nodes.parquet")
	if err := parquet.WriteFile(np, []parquetNode{{ID: 1, Emb: []float32{1}}, {ID: 2, Label: 1, Emb: []float32{2}}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(np)
	if err != nil {
		t.Fatal(err)
	}
	for i := 8; i < len(b)-8; i += 7 {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(np, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Import([]string{np}, opts(np))
	if err == nil || !strings.Contains(err.Error(), "nodes.parquet") {
		t.Fatalf("a damaged file: %v", err)
	}
}

type parquetNullableNode struct {
	ID    string   `parquet:"id"`
	Label *float64 `parquet:"label,optional"` // pandas' float labels with NaN
	X     float32  `parquet:"x"`
}

type parquetNullableEdge struct {
	Src string  `parquet:"src"`
	Dst *string `parquet:"dst,optional"`
}

// TestParquetNulls: a null or NaN label is an unlabelled vertex; a null
// endpoint is an error naming the file, the row and the column.
func TestParquetNulls(t *testing.T) {
	dir := t.TempDir()
	f := func(x float64) *float64 { return &x }
	s := func(x string) *string { return &x }
	ns := []parquetNullableNode{{"a", f(0), 1}, {"b", f(1), 2}, {"c", nil, 3}, {"d", f(math.NaN()), 4}, {"e", f(1), 5}, {"f", f(0), 6}}
	np := filepath.Join(dir, "nodes.parquet")
	ep := filepath.Join(dir, "edges.parquet")
	if err := parquet.WriteFile(np, ns); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(ep, []parquetNullableEdge{{"a", s("b")}, {"c", s("d")}, {"e", nil}}); err != nil {
		t.Fatal(err)
	}
	o := opts(np)
	o.Draw = dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}
	_, err := Import([]string{ep}, o)
	var re *RowError
	if !errors.As(err, &re) || re.Row != 3 || re.Column != "dst" || !strings.Contains(err.Error(), "edges.parquet: row 3, column \"dst\": empty") {
		t.Fatalf("a null endpoint: %v", err)
	}
	if err := parquet.WriteFile(ep, []parquetNullableEdge{{"a", s("b")}, {"c", s("d")}}); err != nil {
		t.Fatal(err)
	}
	d, err := Import([]string{ep}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Labels, []int32{0, 1, -1, -1, 1, 0}) || d.IDs.Strings[5] != "f" {
		t.Fatalf("labels %v, ids %v", d.Labels, d.IDs)
	}
}

// TestMaskColumns: three boolean columns give the split.
func TestMaskColumns(t *testing.T) {
	dir := t.TempDir()
	np := writeText(t, dir, "nodes.csv", "id,label,x,train,valid,test\na,0,1,1,0,0\nb,1,2,true,,\nc,0,3,0,1,0\nd,1,4,,,1\ne,-1,5,0,0,0\n")
	ep := writeText(t, dir, "edges.csv", "src,dst\na,b\nc,d\n")
	o := opts(np)
	o.Split = "train,valid,test"
	d, err := Import([]string{ep}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Train, []int64{0, 1}) || !slices.Equal(d.Valid, []int64{2}) || !slices.Equal(d.Test, []int64{3}) || d.FeatDim != 1 {
		t.Fatalf("split %v %v %v, dim %d (the masks are not features)", d.Train, d.Valid, d.Test, d.FeatDim)
	}
}
