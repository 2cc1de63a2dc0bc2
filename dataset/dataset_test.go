package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

// ring returns a valid in-memory dataset: an undirected ring of n vertices
// (each vertex linked to v-1 and v+1), feat_dim 3, 4 classes, the last vertex
// unlabelled.
func ring(n int64) *Dataset {
	g := &graph.CSR{NumNodes: n, Indptr: make([]int64, n+1)}
	for v := range n {
		g.Indices = append(g.Indices, int32((v+n-1)%n), int32((v+1)%n))
		g.Indptr[v+1] = int64(len(g.Indices))
	}
	d := &Dataset{Name: "ring", Source: "test ring", Symmetric: true, Graph: g, FeatDim: 3, NumClasses: 4}
	for v := range n {
		d.Features = append(d.Features, float32(v), float32(-v), 0.5)
		d.Labels = append(d.Labels, int32(v%4))
	}
	d.Labels[n-1] = -1
	d.Train = []int64{0, 1, 2}
	d.Valid = []int64{3, 4}
	d.Test = []int64{5}
	return d
}

// sameContent compares two datasets field by field.
func sameContent(t *testing.T, got, want *Dataset) {
	t.Helper()
	if got.Name != want.Name || got.Source != want.Source || got.Symmetric != want.Symmetric ||
		got.FeatDim != want.FeatDim || got.NumClasses != want.NumClasses {
		t.Errorf("scalars: got %q %q %v %d %d, want %q %q %v %d %d", got.Name, got.Source, got.Symmetric, got.FeatDim,
			got.NumClasses, want.Name, want.Source, want.Symmetric, want.FeatDim, want.NumClasses)
	}
	if !reflect.DeepEqual(got.Preprocessing, want.Preprocessing) {
		t.Errorf("preprocessing: got %q, want %q", got.Preprocessing, want.Preprocessing)
	}
	if !reflect.DeepEqual(*got.Graph, *want.Graph) {
		t.Errorf("graph: got %+v, want %+v", *got.Graph, *want.Graph)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"features", got.Features, want.Features}, {"labels", got.Labels, want.Labels},
		{"train", got.Train, want.Train}, {"valid", got.Valid, want.Valid}, {"test", got.Test, want.Test},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestWriteOpenRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub", "ds")
	want := ring(10)
	want.Valid = []int64{} // an empty valid split is allowed
	want.Preprocessing = []string{StepSymmetrize}
	want.NormalizeFeatures()
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameContent(t, got, want)
	if gi, wi := got.Info(), want.Info(); !reflect.DeepEqual(gi, wi) {
		t.Errorf("Info differs: %+v vs %+v", gi, wi)
	}
	if err := got.Close(); err != nil {
		t.Fatal(err)
	}
	if err := got.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if got.Features != nil || got.Graph.Indices != nil {
		t.Error("Close left mapped slices reachable")
	}
	if err := want.Close(); err != nil || want.Features == nil {
		t.Errorf("Close of an in-memory dataset: %v, features kept: %v", err, want.Features != nil)
	}
	m, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	wantM := Manifest{FormatVersion: 1, Name: "ring", Source: "test ring", NumNodes: 10, NumEdges: 20, Symmetric: true,
		FeatDim: 3, NumClasses: 4, NumTrain: 3, NumValid: 0, NumTest: 1,
		Preprocessing: []string{"symmetrize", "normalize-features"}}
	if !reflect.DeepEqual(m, wantM) {
		t.Errorf("manifest %+v, want %+v", m, wantM)
	}
	if s := want.Info().String(); !strings.Contains(s, "preprocess symmetrize, normalize-features\n") {
		t.Errorf("info does not show the preprocessing:\n%s", s)
	}
}

func TestWriteReplacesDataset(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ds")
	if err := os.Mkdir(dir, 0o755); err != nil { // an empty directory may be written into
		t.Fatal(err)
	}
	if err := Write(dir, ring(10)); err != nil {
		t.Fatal(err)
	}
	old, err := Open(dir) // mapped while it is replaced
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	second := ring(7)
	second.Name = "second"
	if err := Write(dir, second); err != nil {
		t.Fatal(err)
	}
	got, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	sameContent(t, got, second)
	sameContent(t, old, ring(10))
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("parent holds %d entries after replacing, want 1 (no temporary leftovers)", len(entries))
	}
}

func TestWriteRefusesOtherDirectory(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, ring(10))
	if err == nil || !strings.Contains(err.Error(), "not a fanout dataset (it holds notes.txt)") {
		t.Fatalf("error %v, want refusal naming notes.txt", err)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("notes.txt gone: %v", err)
	}
}

func TestFailedWriteLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ds")
	bad := ring(10)
	bad.Labels[2] = 4
	err := Write(dir, bad)
	if err == nil || !strings.Contains(err.Error(), "label.npy: vertex 2 has label 4") {
		t.Fatalf("error %v, want label.npy complaint", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("failed Write left %d entries", len(entries))
	}
	// A failed Write over an existing dataset keeps the old one intact.
	if err := Write(dir, ring(10)); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, bad); err == nil {
		t.Fatal("invalid dataset written")
	}
	onlyRing(t, parent, dir)
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(d *Dataset)
		want   string
	}{
		{"empty train", func(d *Dataset) { d.Train = nil }, "train_idx.npy: the train split is empty"},
		{"label high", func(d *Dataset) { d.Labels[3] = 4 }, "label.npy: vertex 3 has label 4, want -1 (unlabelled) or [0, 4)"},
		{"label low", func(d *Dataset) { d.Labels[3] = -2 }, "label.npy: vertex 3 has label -2"},
		{"index high", func(d *Dataset) { d.Graph.Indices[5] = 10 }, "indices.npy: edge 5 (row 2) has neighbour 10, out of range [0, 10)"},
		{"index negative", func(d *Dataset) { d.Graph.Indices[0] = -1 }, "indices.npy: edge 0 (row 0) has neighbour -1"},
		{"indptr decreasing", func(d *Dataset) { d.Graph.Indptr[4] = 1 }, "indptr.npy: indptr decreases at row 3 (6 -> 1)"},
		{"indptr start", func(d *Dataset) { d.Graph.Indptr[0] = 1 }, "indptr.npy: indptr[0] = 1, want 0"},
		{"indptr end", func(d *Dataset) { d.Graph.Indices = d.Graph.Indices[:19] }, "indptr.npy: indptr[10] = 20, but indices.npy holds 19 edges"},
		{"indptr length", func(d *Dataset) { d.Graph.Indptr = d.Graph.Indptr[:10] }, "indptr.npy: 10 entries, want num_nodes+1 = 11"},
		{"wide indices", func(d *Dataset) { d.Graph.Indices64 = []int64{} }, "indices.npy: 10 vertices need int32 indices"},
		{"features", func(d *Dataset) { d.Features = d.Features[:29] }, "feat.npy: 29 values, want num_nodes*feat_dim = 10*3 = 30"},
		{"labels", func(d *Dataset) { d.Labels = d.Labels[:9] }, "label.npy: 9 labels, want num_nodes = 10"},
		{"split range", func(d *Dataset) { d.Test = []int64{5, 10} }, "test_idx.npy: entry 1 is vertex 10, out of range [0, 10)"},
		{"split duplicate", func(d *Dataset) { d.Valid = []int64{3, 4, 3} }, "valid_idx.npy: entry 2 repeats vertex 3"},
		{"train and test", func(d *Dataset) { d.Test = []int64{5, 1} },
			"test_idx.npy: entry 1 is vertex 1, which is also in the training split (train_idx.npy entry 1)"},
		{"valid and test", func(d *Dataset) { d.Test = []int64{4} },
			"test_idx.npy: entry 0 is vertex 4, which is also in the validation split (valid_idx.npy entry 1)"},
		{"train and valid", func(d *Dataset) { d.Valid = []int64{3, 0} },
			"valid_idx.npy: entry 1 is vertex 0, which is also in the training split (train_idx.npy entry 0)"},
		{"split unlabelled", func(d *Dataset) { d.Train = []int64{9} }, "train_idx.npy: entry 0 is vertex 9, which is unlabelled"},
		{"classes", func(d *Dataset) { d.NumClasses = 0 }, "manifest.yaml: num_classes is 0, want >= 1"},
		{"no graph", func(d *Dataset) { d.Graph = nil }, "dataset has no graph"},
	}
	if err := ring(10).Validate(); err != nil {
		t.Fatalf("valid dataset: %v", err)
	}
	for _, c := range cases {
		d := ring(10)
		c.mutate(d)
		if err := d.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want prefix %q", c.name, err, c.want)
		}
	}
}

func TestValidateParallelReportsFirst(t *testing.T) {
	d := ring(50000) // 100k edges: above serialBelow, so checked in parts
	d.Graph.Indices[99990] = -7
	d.Graph.Indices[70000] = 50000
	want := "indices.npy: edge 70000 (row 35000) has neighbour 50000"
	if err := d.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want prefix %q", err, want)
	}
}

func TestInfo(t *testing.T) {
	// Star: vertex 0 linked to 1..4 both ways, vertex 5 isolated.
	g := &graph.CSR{NumNodes: 6, Indptr: []int64{0, 4, 5, 6, 7, 8, 8}, Indices: []int32{1, 2, 3, 4, 0, 0, 0, 0}}
	d := &Dataset{Name: "star", Graph: g, FeatDim: 2, NumClasses: 2, Features: make([]float32, 12),
		Labels: []int32{0, 1, 1, -1, -1, 0}, Train: []int64{0, 1}, Test: []int64{2}, Symmetric: true}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	i := d.Info()
	want := Info{Name: "star", Symmetric: true, NumNodes: 6, NumEdges: 8, FeatDim: 2, FeatureDType: "float32", FeatureBytes: 48, NumClasses: 2,
		NumTrain: 2, NumTest: 1, Labelled: 4,
		Degree: graph.DegreeStats{Min: 0, Max: 4, Mean: 8.0 / 6, P50: 1, P90: 4, P99: 4, Isolated: 1}}
	if !reflect.DeepEqual(i, want) {
		t.Errorf("Info\n%+v\nwant\n%+v", i, want)
	}
	s := i.String()
	for _, line := range []string{
		"name       star\n",
		"vertices   6\n",
		"edges      8 (directed, symmetric; int32 ids)\n",
		"degree     mean 1.33  min 0  p50 1  p90 4  p99 4  max 4\n",
		"isolated   1 (16.7%)\n",
		"features   2 float32 per vertex (48 B)\n",
		"labelled   4 (66.7%)\n",
		"split      train 2  valid 0  test 1\n",
	} {
		if !strings.Contains(s, line) {
			t.Errorf("String() lacks %q:\n%s", line, s)
		}
	}
	if group(2097152) != "2,097,152" || group(-1000) != "-1,000" || group(999) != "999" {
		t.Errorf("group: %s %s %s", group(2097152), group(-1000), group(999))
	}
}
