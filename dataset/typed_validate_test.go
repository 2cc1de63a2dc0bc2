package dataset

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

// TestValidateTyped breaks one thing of a valid typed dataset at a time:
// the error names the file at fault and what is wrong.
func TestValidateTyped(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(d *Dataset)
		want   string
	}{
		{"one graph too", func(d *Dataset) { d.Graph = &graph.CSR{} }, "manifest.yaml: a typed dataset has relations, not one graph"},
		{"features too", func(d *Dataset) { d.Features = []float32{1} }, "feat.npy: a typed dataset holds features per type"},
		{"symmetric", func(d *Dataset) { d.Symmetric = true }, "symmetric describes a graph of one type"},
		{"target", func(d *Dataset) { d.Target = 3 }, "manifest.yaml: target is type 3 of 3"},
		{"feat_dim", func(d *Dataset) { d.FeatDim = 5 }, "feat_dim is 5, but the target paper has 2"},
		{"type name", func(d *Dataset) { d.Types[1].Name = "au.thor" }, `types[1].name "au.thor" holds "."`},
		{"repeated type", func(d *Dataset) { d.Types[2].Name = "author" }, `types[2].name "author" repeats types[1]'s`},
		{"empty type", func(d *Dataset) { d.Types[1].Count = 0 }, "types[1] (author): count is 0, want 1 to 2147483647"},
		{"features short", func(d *Dataset) { d.Types[0].Features = d.Types[0].Features[:9] },
			"types/paper/feat.npy: 9 values, want paper's count*feat_dim = 5*2 = 10"},
		{"features not finite", func(d *Dataset) { d.Types[2].Features = []float32{1, float32(math.Inf(1))} },
			"types/field/feat.npy: row 1 (vertex 1), column 0 is +Inf"},
		{"featureless with a table", func(d *Dataset) { d.Types[1].Features = []float32{1, 2, 3} },
			"types/author/feat.npy: type author has feat_dim 0 but a feature table"},
		{"two dtypes", func(d *Dataset) { d.Types[2].Features, d.Types[2].FeaturesBF16 = nil, []uint16{0, 0} },
			"types/paper/feat.npy: float32 features, but type field's are bfloat16"},
		{"ids", func(d *Dataset) { d.Types[2].IDs = &NodeIDs{Strings: []string{"x"}} }, "types/field/ids.txt: 1 ids, want field's count = 2"},
		{"relation type", func(d *Dataset) { d.Relations[0].Src = 7 }, `relations[0] (writes).src is "", which types does not list`},
		{"relation twice", func(d *Dataset) { d.Relations[4].Name = "has_topic"; d.Relations[4].Src, d.Relations[4].Dst = 0, 2 },
			"relations[4] repeats relations[2], (paper, has_topic, field)"},
		{"rows", func(d *Dataset) { d.Relations[2].Graph = d.Relations[3].Graph },
			"relations/paper.has_topic.field/indptr.npy: 3 rows, want one per vertex of the destination field (2)"},
		{"index", func(d *Dataset) { d.Relations[2].Graph.Indices[4] = 5 },
			"relations/paper.has_topic.field/indices.npy: edge 4 (row 1) has neighbour 5, out of range [0, 5)"},
		{"unsorted", func(d *Dataset) { g := d.Relations[2].Graph; g.Indices[2], g.Indices[3] = 3, 2 },
			"relations/paper.has_topic.field/indices.npy: row 1 is not sorted: 2 after 3 (entries 2 and 3)"},
		{"repeat", func(d *Dataset) { d.Relations[2].Graph.Indices[3] = 2 },
			"relations/paper.has_topic.field/indices.npy: row 1 repeats 2 after 2 (entries 2 and 3)"},
		{"labels", func(d *Dataset) { d.Labels = d.Labels[:4] }, "label.npy: 4 labels, want paper's count = 5"},
		{"split", func(d *Dataset) { d.Test = []int64{5} }, "test_idx.npy: entry 0 is vertex 5, out of range [0, 5)"},
		{"unlabelled", func(d *Dataset) { d.Test = []int64{4} }, "test_idx.npy: entry 0 is vertex 4, which is unlabelled"},
		{"link", func(d *Dataset) { d.Link = &LinkSplit{} }, "a typed dataset has no link-prediction task yet"},
	} {
		d := smallTyped(t, true)
		c.break_(d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

const goodTypedManifest = `format_version: 2
name: small
source: test
target: paper
num_classes: 3
num_train: 2
num_valid: 1
num_test: 1
types:
  - {name: paper, count: 5, feat_dim: 2}
  - name: author
    count: 3
    feat_dim: 0
    node_ids: ids.npy
relations:
  - {src: author, name: writes, dst: paper, num_edges: 5}
`

func TestParseTypedManifest(t *testing.T) {
	m, err := ParseTypedManifest([]byte(goodTypedManifest))
	if err != nil {
		t.Fatal(err)
	}
	want := TypedManifest{FormatVersion: 2, Name: "small", Source: "test", Target: "paper", NumClasses: 3, NumTrain: 2, NumValid: 1, NumTest: 1,
		Types:     []TypeEntry{{Name: "paper", Count: 5, FeatDim: 2}, {Name: "author", Count: 3, NodeIDs: IDsFile}},
		Relations: []RelationEntry{{Src: "author", Name: "writes", Dst: "paper", NumEdges: 5}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %+v, want %+v", m, want)
	}
	edit := func(old, new string) string {
		if !strings.Contains(goodTypedManifest, old) {
			t.Fatalf("no %q", old)
		}
		return strings.Replace(goodTypedManifest, old, new, 1)
	}
	for _, c := range []struct{ text, want string }{
		{edit("feat_dim: 0", "feat_dim: 0\n    color: red"), `line 14: unknown key "color"`},
		{edit("count: 3", "count: 3.5"), `line 12: count is "3.5", want an integer`},
		{edit("num_edges: 5", "num_edges: five"), "cannot unmarshal !!str `five` into int64"},
		{edit("target: paper", "target: venue"), `target is "venue", want the name of a type`},
		{edit("dst: paper", "dst: venue"), `relations[0] (writes).dst is "venue", which types does not list`},
		{edit("name: writes", "name: wr.ites"), `relations[0].name "wr.ites" holds "."`},
		{edit("num_train: 2", "num_train: 6"), "num_train is 6, more than 5 (the target paper has 5 vertices)"},
		{edit("num_test: 1", "num_test: 3"), "num_train + num_valid + num_test = 2 + 1 + 3 exceeds the 5 vertices of the target paper"},
		{edit("node_ids: ids.npy", "node_ids: ../x.npy"), `types[1] (author): node_ids is "../x.npy"`},
		{edit("count: 5", "count: 2147483648"), "count is 2147483648, want 1 to 2147483647"},
		{edit("feat_dim: 2", "feat_dim: -1"), "feat_dim is -1, want 0 (no features) to 16777216"},
		{edit("num_classes: 3", "num_classes: 0"), "num_classes is 0 or missing"},
		{strings.Replace(goodTypedManifest, "relations:\n  - {src: author, name: writes, dst: paper, num_edges: 5}\n", "", 1), "relations is empty or missing"},
		{goodTypedManifest + "  - {src: author, name: writes, dst: paper, num_edges: 1}\n", "relations[1] repeats relations[0]"},
		{goodTypedManifest + "---\nname: x\n", "more than one YAML document"},
	} {
		_, err := ParseTypedManifest([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line containing %q", err, c.want)
		}
	}
	if _, err := ParseManifest([]byte(goodTypedManifest)); err == nil || !strings.Contains(err.Error(), "format_version is 2: a typed dataset") {
		t.Errorf("the one-type reader: %v", err)
	}
}

// FuzzParseTypedManifest: arbitrary text must not panic, and an accepted
// manifest must survive marshal and parse unchanged.
func FuzzParseTypedManifest(f *testing.F) {
	f.Add([]byte(goodTypedManifest))
	f.Add([]byte("format_version: 2\ntarget: a\nnum_classes: 1\nnum_train: 1\ntypes: [{name: a, count: 1}]\nrelations: [{src: a, name: r, dst: a}]\n"))
	f.Add([]byte("format_version: 2\ntypes: [&t {name: a, count: 1}, *t]\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseTypedManifest(in)
		if err != nil {
			if len(err.Error()) > 1000 || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of %d bytes or lines: %.300q", len(err.Error()), err.Error())
			}
			return
		}
		text, err := m.marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := ParseTypedManifest(text)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", text, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip: %+v became %+v", m, again)
		}
	})
}

// TestOpenTypedBadFiles damages one file of a written typed dataset: Open
// names it and what is wrong.
func TestOpenTypedBadFiles(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"missing table", func(t *testing.T, dir string) { remove(t, dir, "types/field/feat.npy") }, "types/field/feat.npy: no such file"},
		{"short indices", func(t *testing.T, dir string) {
			copyFile(t, dir, "relations/paper.has_topic.field/indptr.npy", "relations/paper.has_topic.field/indices.npy")
		}, "relations/paper.has_topic.field/indices.npy: shape [3], but manifest.yaml says num_edges of (paper, has_topic, field) = 5"},
		{"edges", func(t *testing.T, dir string) { editManifest(t, dir, "num_edges: 8", "num_edges: 7") }, "num_edges of (paper, cites, paper) = 7"},
		{"unsorted", func(t *testing.T, dir string) {
			copyFile(t, dir, "relations/author.writes.paper/indices.npy", "relations/paper.rev_writes.author/indices.npy")
		}, "relations/paper.rev_writes.author/indices.npy: row 0 repeats 0 after 0"},
		{"dtype", func(t *testing.T, dir string) {
			editManifest(t, dir, "target: paper", "target: paper\nfeature_dtype: bfloat16")
		},
			"types/paper/feat.npy: dtype <f4, but manifest.yaml says feature_dtype: bfloat16"},
	} {
		dir := filepath.Join(t.TempDir(), "ds")
		if err := Write(dir, smallTyped(t, true)); err != nil {
			t.Fatal(err)
		}
		c.damage(t, dir)
		d, err := Open(dir)
		if err == nil {
			d.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// remove deletes a file of the dataset in dir.
func remove(t *testing.T, dir, file string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
}

// copyFile replaces the dataset file dst with a copy of src.
func copyFile(t *testing.T, dir, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
