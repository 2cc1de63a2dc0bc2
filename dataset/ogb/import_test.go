package ogb

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"errors"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
)

// checkTiny compares an import of the tiny folder with the expected data.
func checkTiny(t *testing.T, d *dataset.Dataset, symmetric bool) {
	t.Helper()
	// Row v lists the sources of the edges into v; the self loop and the
	// duplicate are gone.
	wantPtr := []int64{0, 1, 3, 4, 4, 5, 5}
	wantIdx := []int32{5, 0, 4, 1, 3}
	if symmetric {
		wantPtr = []int64{0, 2, 5, 6, 7, 9, 10}
		wantIdx = []int32{1, 5, 0, 2, 4, 1, 4, 1, 3, 0}
	}
	if g := d.Graph; g.NumNodes != 6 || !slices.Equal(g.Indptr, wantPtr) || !slices.Equal(g.Indices, wantIdx) {
		t.Errorf("graph %d vertices, indptr %v, indices %v; want 6, %v, %v", g.NumNodes, g.Indptr, g.Indices, wantPtr, wantIdx)
	}
	if d.FeatDim != 3 || !slices.Equal(d.Features, tinyFeatures) {
		t.Errorf("features dim %d %v, want 3 %v", d.FeatDim, d.Features, tinyFeatures)
	}
	if d.NumClasses != 3 || !slices.Equal(d.Labels, tinyLabels) {
		t.Errorf("labels %v (%d classes), want %v (3)", d.Labels, d.NumClasses, tinyLabels)
	}
	if !slices.Equal(d.Train, []int64{0, 1}) || !slices.Equal(d.Valid, []int64{2}) || !slices.Equal(d.Test, []int64{3, 4}) {
		t.Errorf("split %v %v %v", d.Train, d.Valid, d.Test)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestImportCSV(t *testing.T) {
	dir := writeTree(t, "ogbn_tiny", tinyFiles())
	for _, sym := range []bool{false, true} {
		for _, threads := range []int{1, 3} {
			d, err := Import(dir, Options{Symmetrize: sym, Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			checkTiny(t, d, sym)
			if d.Name != "ogbn_tiny" {
				t.Errorf("name %q", d.Name)
			}
		}
	}
	// The raw folder itself works too, and a name can be given.
	d, err := Import(filepath.Join(dir, "raw"), Options{Name: "x", Split: "time"})
	if err != nil {
		t.Fatal(err)
	}
	checkTiny(t, d, false)
	if d.Name != "x" {
		t.Errorf("name %q", d.Name)
	}
}

func TestImportPlainCSVAndNaN(t *testing.T) {
	files := map[string]string{}
	for name, text := range tinyFiles() {
		files[strings.TrimSuffix(name, ".gz")] = text
	}
	delete(files, "raw/num-edge-list.csv") // unknown edge count: parsed chunk by chunk
	files["raw/node-label.csv"] = "0\n2.0\n1\n2\n0\nNaN\n"
	d, err := Import(writeTree(t, "plain", files), Options{Symmetrize: true})
	if err != nil {
		t.Fatal(err)
	}
	checkTiny(t, d, true)
}

func TestImportProgress(t *testing.T) {
	dir := writeTree(t, "ogbn_tiny", tinyFiles())
	stages := map[string]bool{}
	_, err := Import(dir, Options{Progress: func(stage string, done, total int64) {
		if done > total {
			t.Errorf("stage %s: done %d > total %d", stage, done, total)
		}
		stages[stage] = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"edge.csv.gz", "node-feat.csv.gz", "node-label.csv.gz"} {
		if !stages[s] {
			t.Errorf("no progress for %s (have %v)", s, stages)
		}
	}
}

func TestImportPapersLayout(t *testing.T) {
	files := tinyFiles()
	for name := range files {
		if strings.HasPrefix(name, "raw/") {
			delete(files, name)
		}
	}
	dir := writeTree(t, "ogbn_papers_tiny", files)
	raw := filepath.Join(dir, "raw")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	edgeIndex := append(slices.Clone(tinySrc), tinyDst...)
	writeNPZ(t, filepath.Join(raw, "data.npz"),
		npzMember{"edge_index", edgeIndex, []int64{2, 7}},
		npzMember{"node_feat", tinyFeatures, []int64{6, 3}},
		npzMember{"num_nodes_list", []int64{6}, []int64{1}},
		npzMember{"num_edges_list", []int64{7}, []int64{1}})
	nan := float32(math.NaN())
	writeNPZ(t, filepath.Join(raw, "node-label.npz"),
		npzMember{"node_label", []float32{0, 2, 1, 2, 0, nan}, []int64{6, 1}})
	for _, sym := range []bool{false, true} {
		d, err := Import(dir, Options{Symmetrize: sym})
		if err != nil {
			t.Fatal(err)
		}
		checkTiny(t, d, sym)
	}
	// Bad inputs of this layout name the file and the array.
	writeNPZ(t, filepath.Join(raw, "node-label.npz"),
		npzMember{"node_label", []float32{0, 2, 1.5, 2, 0, nan}, []int64{6, 1}})
	if _, err := Import(dir, Options{}); err == nil || !strings.Contains(err.Error(), "node-label.npz: node_label[2] = 1.5 is not a class id") {
		t.Errorf("fractional label: %v", err)
	}
	edgeIndex[3] = 6
	writeNPZ(t, filepath.Join(raw, "data.npz"),
		npzMember{"edge_index", edgeIndex, []int64{2, 7}},
		npzMember{"node_feat", tinyFeatures, []int64{6, 3}},
		npzMember{"num_nodes_list", []int64{6}, []int64{1}})
	if _, err := Import(dir, Options{}); err == nil || !strings.Contains(err.Error(), "data.npz: edge_index[:, 3] = (6, 4) is out of range [0, 6)") {
		t.Errorf("edge out of range: %v", err)
	}
}

func TestImportBadInput(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(files map[string]string)
		file  string // the file the error must name
		want  string
		split string
	}{
		{"missing file", func(f map[string]string) { delete(f, "raw/node-feat.csv.gz") }, "node-feat.csv.gz", "file not found", ""},
		{"non-numeric feature", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n1,2,3\n1,abc,3\n1,2,3\n1,2,3\n1,2,3\n" }, "node-feat.csv.gz", `line 3: field 2: "abc" is not a finite number`, ""},
		{"short feature row", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n1,2\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n" }, "node-feat.csv.gz", "line 2: 2 fields, want 3", ""},
		{"long feature row", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n1,2,3,4\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n" }, "node-feat.csv.gz", "line 2: more than 3 fields", ""},
		{"infinite feature", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n1,2,1e999\n" }, "node-feat.csv.gz", `line 2: field 3: "1e999" is not a finite number`, ""},
		{"missing rows", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n" }, "node-feat.csv.gz", "1 rows, but num-node-list announces 6 vertices", ""},
		{"edge out of range", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n1,6\n2,2\n3,4\n3,4\n5,0\n4,1\n" }, "edge.csv.gz", "line 2: field 2: vertex id 6 is out of range [0, 6)", ""},
		{"negative edge", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n1,2\n-2,2\n3,4\n3,4\n5,0\n4,1\n" }, "edge.csv.gz", "line 3: field 1: vertex id -2 is out of range", ""},
		{"non-numeric edge", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n1,2\n2,x\n3,4\n3,4\n5,0\n4,1\n" }, "edge.csv.gz", `line 3: field 2: "x" is not an integer`, ""},
		{"three fields", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1,2\n" }, "edge.csv.gz", "line 1: want two comma-separated vertex ids", ""},
		{"edge count", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n1,2\n" }, "edge.csv.gz", "2 edges, but num-edge-list announces 7", ""},
		{"extra edges", func(f map[string]string) { f["raw/num-edge-list.csv.gz"] = "1\n" }, "edge.csv.gz", "line 2: more than the 1 edges that num-edge-list announces", ""},
		{"label out of range", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2\n-2\n0\n0\n" }, "node-label.csv.gz", "line 4: label -2 is out of range", ""},
		{"fractional label", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2.5\n1\n0\n0\n" }, "node-label.csv.gz", `line 3: "2.5" is not a class id`, ""},
		{"multi-label", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0,1\n" }, "node-label.csv.gz", "line 1: 2 fields: multi-label", ""},
		{"bad count", func(f map[string]string) { f["raw/num-node-list.csv.gz"] = "six\n" }, "num-node-list.csv.gz", `line 1: "six" is not a count`, ""},
		{"several graphs", func(f map[string]string) { f["raw/num-node-list.csv.gz"] = "3\n3\n" }, "num-node-list.csv.gz", "several graphs", ""},
		{"split out of range", func(f map[string]string) { f["split/time/test.csv.gz"] = "3\n9\n" }, "test.csv.gz", "line 2: vertex id 9 is out of range [0, 6)", ""},
		{"unlabelled in split", func(f map[string]string) { f["split/time/train.csv.gz"] = "0\n5\n" }, "train.csv.gz", "line 2: vertex 5 has no label", ""},
		{"repeated id in split", func(f map[string]string) { f["split/time/test.csv.gz"] = "3\n4\n3\n" }, "test.csv.gz", "line 3: vertex 3 is listed twice", ""},
		{"empty split", func(f map[string]string) { f["split/time/valid.csv.gz"] = "" }, "valid.csv.gz", "the valid split is empty", ""},
		{"two splits", func(f map[string]string) { f["split/other/train.csv.gz"] = "0\n" }, "split", `several splits ("other, time")`, ""},
		{"unknown split", nil, "split", `split folder "random" not found`, "random"},
		{"split outside split/", func(f map[string]string) {
			f["raw/time/train.csv.gz"], f["raw/time/valid.csv.gz"], f["raw/time/test.csv.gz"] = "0\n", "2\n", "3\n"
		}, "split", `split folder "../raw/time" not found`, "../raw/time"},
		{"long split name", nil, "split", `split folder "xxxx`, strings.Repeat("x", 1<<20)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := tinyFiles()
			if c.edit != nil {
				c.edit(files)
			}
			_, err := Import(writeTree(t, "ogbn_tiny", files), Options{Split: c.split})
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %.500q, want %q naming %s", err, c.want, c.file)
			}
			if len(err.Error()) > 600 {
				t.Errorf("a message of %d bytes: the input is quoted whole", len(err.Error()))
			}
		})
	}
}

func TestImportTruncatedGzip(t *testing.T) {
	dir := writeTree(t, "ogbn_tiny", tinyFiles())
	// A longer edge file, so that cutting it loses whole deflate data.
	var b strings.Builder
	for range 5000 {
		b.WriteString("1,2\n3,4\n")
	}
	full := gz(t, b.String())
	path := filepath.Join(dir, "raw", "edge.csv.gz")
	if err := os.WriteFile(path, full[:len(full)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", "num-edge-list.csv.gz"), gz(t, "10000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Import(dir, Options{})
	if !errors.Is(err, gzipfile.ErrTruncated) || !strings.HasPrefix(err.Error(), path+": ") ||
		strings.Count(err.Error(), "truncated") != 1 || strings.Contains(err.Error(), "\n") {
		t.Errorf("truncated gzip: %v; want one line naming %s as truncated", err, path)
	}
	// Plain text under a .gz name is said not to be gzip (not read as text).
	if err := os.WriteFile(path, []byte("1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", "num-edge-list.csv.gz"), gz(t, "2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Import(dir, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), path+": not a gzip file") {
		t.Errorf("plain text named .gz: %v; want it named as not gzip", err)
	}
}

func TestLocateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Import(filepath.Join(dir, "nope"), Options{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := Import(dir, Options{}); err == nil || !strings.Contains(err.Error(), "no raw/edge.csv.gz, raw/data.npz or, for a typed dataset such as ogbn-mag, raw/num-node-dict.csv.gz") {
		t.Errorf("empty folder: %v", err)
	}
}

func TestAddInverseEdge(t *testing.T) {
	if !AddInverseEdge("ogbn-products") || !AddInverseEdge("ogbn_products") || AddInverseEdge("ogbn-arxiv") || AddInverseEdge("ogbn-papers100M") {
		t.Error("AddInverseEdge disagrees with OGB's table")
	}
}
