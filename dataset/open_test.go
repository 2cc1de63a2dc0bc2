package dataset

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/npy"
)

// written writes ring(10) to a fresh directory and returns it.
func written(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if err := Write(dir, ring(10)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editManifest replaces old with new in the manifest text.
func editManifest(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, ManifestFile)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), old) {
		t.Fatalf("manifest lacks %q:\n%s", old, text)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(text), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// putArray overwrites one array file.
func putArray(t *testing.T, dir, file string, data any, shape ...int64) {
	t.Helper()
	if err := npy.WriteFile(filepath.Join(dir, file), data, shape); err != nil {
		t.Fatal(err)
	}
}

func TestOpenBadInput(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string // after "DIR/"
	}{
		{"truncated feat", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, FeatFile), 128+100); err != nil {
				t.Fatal(err)
			}
		}, "feat.npy: truncated: header says 10x3 float32 (120 bytes) but file has 100 bytes of data"},
		{"label dtype", func(t *testing.T, dir string) { putArray(t, dir, LabelFile, make([]float32, 10), 10) },
			"label.npy: dtype <f4, want int32/int64"},
		{"feat dtype", func(t *testing.T, dir string) { putArray(t, dir, FeatFile, make([]float64, 30), 10, 3) },
			"feat.npy: dtype <f8, want float32"},
		{"feat shape", func(t *testing.T, dir string) { putArray(t, dir, FeatFile, make([]float32, 30), 30) },
			"feat.npy: shape [30], but manifest.yaml says num_nodes = 10, feat_dim = 3"},
		{"num_edges", func(t *testing.T, dir string) { editManifest(t, dir, "num_edges: 20", "num_edges: 21") },
			"indices.npy: shape [20], but manifest.yaml says num_edges = 21"},
		{"num_nodes", func(t *testing.T, dir string) { editManifest(t, dir, "num_nodes: 10", "num_nodes: 9") },
			"indptr.npy: shape [11], but manifest.yaml says num_nodes+1 = 10"},
		{"feat_dim", func(t *testing.T, dir string) { editManifest(t, dir, "feat_dim: 3", "feat_dim: 4") },
			"feat.npy: shape [10 3], but manifest.yaml says num_nodes = 10, feat_dim = 4"},
		{"num_test", func(t *testing.T, dir string) { editManifest(t, dir, "num_test: 1", "num_test: 2") },
			"test_idx.npy: shape [1], but manifest.yaml says num_test = 2"},
		{"index out of range", func(t *testing.T, dir string) {
			g := ring(10).Graph
			g.Indices[7] = 12
			putArray(t, dir, IndicesFile, g.Indices, 20)
		}, "indices.npy: edge 7 (row 3) has neighbour 12, out of range [0, 10)"},
		{"label out of range", func(t *testing.T, dir string) {
			l := ring(10).Labels
			l[6] = 4
			putArray(t, dir, LabelFile, l, 10)
		}, "label.npy: vertex 6 has label 4, want -1 (unlabelled) or [0, 4)"},
		{"empty train", func(t *testing.T, dir string) {
			putArray(t, dir, TrainFile, []int64{}, 0)
			editManifest(t, dir, "num_train: 3", "num_train: 0")
		}, "manifest.yaml: num_train is 0 or missing: the train split must not be empty"},
		{"empty train file", func(t *testing.T, dir string) { putArray(t, dir, TrainFile, []int64{}, 0) },
			"train_idx.npy: shape [0], but manifest.yaml says num_train = 3"},
		{"duplicate split id", func(t *testing.T, dir string) { putArray(t, dir, TrainFile, []int64{0, 1, 0}, 3) },
			"train_idx.npy: entry 2 repeats vertex 0"},
		{"train and test", func(t *testing.T, dir string) { putArray(t, dir, TestFile, []int64{2}, 1) },
			"test_idx.npy: entry 0 is vertex 2, which is also in the training split (train_idx.npy entry 2)"},
		{"unknown key", func(t *testing.T, dir string) { editManifest(t, dir, "name: ring", "name: ring\ncolour: blue") },
			"manifest.yaml: line 4: unknown key \"colour\""},
		{"format version", func(t *testing.T, dir string) { editManifest(t, dir, "format_version: 1", "format_version: 3") },
			"manifest.yaml: format_version is 3, want 1"},
		{"typed format version", func(t *testing.T, dir string) { editManifest(t, dir, "format_version: 1", "format_version: 2") },
			`manifest.yaml: line 5: unknown key "num_nodes"`},
		{"missing file", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, ValidFile)) },
			"valid_idx.npy: no such file"},
		{"large label", func(t *testing.T, dir string) { putArray(t, dir, LabelFile, make([]int64, 10), 10, 1) },
			"label.npy: shape [10 1], but manifest.yaml says num_nodes = 10"},
		{"NaN feature", func(t *testing.T, dir string) {
			f := ring(10).Features
			f[7*3+2] = float32(math.NaN())
			putArray(t, dir, FeatFile, f, 10, 3)
		}, "feat.npy: row 7 (vertex 7), column 2 is NaN; features must be finite numbers"},
		{"infinite feature", func(t *testing.T, dir string) {
			f := ring(10).Features
			f[4*3] = float32(math.Inf(-1))
			putArray(t, dir, FeatFile, f, 10, 3)
		}, "feat.npy: row 4 (vertex 4), column 0 is -Inf"},
		{"not symmetric", func(t *testing.T, dir string) {
			g := ring(10).Graph
			g.Indices[7] = 6 // row 3: 2, 4 becomes 2, 6
			putArray(t, dir, IndicesFile, g.Indices, 20)
		}, "indices.npy: manifest.yaml says symmetric: true, but edge 4->3 has no reverse 3->4"},
		{"bad preprocessing", func(t *testing.T, dir string) {
			editManifest(t, dir, "name: ring", "name: ring\npreprocessing: [\"\"]")
		},
			"manifest.yaml: preprocessing entry 1 is \"\""},
		{"label overflow", func(t *testing.T, dir string) {
			l := make([]int64, 10)
			l[3] = 1 << 40
			putArray(t, dir, LabelFile, l, 10)
		}, "label.npy: element 3 = 1099511627776 does not fit in int32"},
	}
	for _, c := range cases {
		dir := written(t)
		c.mutate(t, dir)
		d, err := Open(dir)
		want := filepath.Join(dir, c.want)
		if err == nil {
			d.Close()
			t.Errorf("%s: no error, want %q", c.name, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error\n  %v\nwant it to contain\n  %q", c.name, err, want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans several lines: %q", c.name, err)
		}
	}
}

func TestOpenConvertsIntegerWidths(t *testing.T) {
	dir := written(t)
	want := ring(10)
	wide := make([]int64, len(want.Labels))
	for i, c := range want.Labels {
		wide[i] = int64(c)
	}
	putArray(t, dir, LabelFile, wide, 10)
	putArray(t, dir, TrainFile, []int32{0, 1, 2}, 3)
	idx64 := make([]int64, len(want.Graph.Indices))
	for i, u := range want.Graph.Indices {
		idx64[i] = int64(u)
	}
	putArray(t, dir, IndicesFile, idx64, 20)
	got, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	sameContent(t, got, want)
	if !reflect.DeepEqual(got.Train, []int64{0, 1, 2}) {
		t.Errorf("train %v", got.Train)
	}
}
