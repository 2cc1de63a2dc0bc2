package graphbolt

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

// fixture is a small homogeneous graph in GraphBolt's on-disk layout.
type fixture struct {
	n          int64
	src, dst   []int64
	feat       []float32 // [n, 3]
	label      []int64   // [n]
	train      []int64
	valid      []int64
	test       []int64
	numpyEdges bool // edges as a [2, m] .npy file instead of CSV
	labelFeat  bool // labels as a node feature too
}

// newFixture is a ring of n vertices with chords, a self loop and a
// repeated edge; three classes.
func newFixture(n int64) *fixture {
	f := &fixture{n: n}
	for v := range n {
		f.src, f.dst = append(f.src, v), append(f.dst, (v+1)%n)
		if v%3 == 0 {
			f.src, f.dst = append(f.src, (v+5)%n), append(f.dst, v)
		}
		f.feat = append(f.feat, float32(v), float32(v)/2, 1)
		f.label = append(f.label, v%3)
	}
	f.src, f.dst = append(f.src, 4, 0), append(f.dst, 4, 1) // a self loop, a repeat of 0->1
	f.train, f.valid, f.test = []int64{0, 1, 2, 3, 4, 5}, []int64{6, 7, 8}, []int64{9, 10, 11}
	return f
}

// write writes the fixture's files and metadata.yaml, as DGL's
// documentation lays them out, into a new directory.
func (f *fixture) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"edges", "data", "set"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	save := func(name string, data any, shape ...int64) {
		if err := npy.WriteFile(filepath.Join(dir, name), data, shape); err != nil {
			t.Fatal(err)
		}
	}
	edges := "    - format: csv\n      path: edges/edge.csv\n"
	if f.numpyEdges {
		save("edges/edge.npy", slices.Concat(f.src, f.dst), 2, int64(len(f.src)))
		edges = "    - format: numpy\n      path: edges/edge.npy\n"
	} else {
		var b strings.Builder
		for i := range f.src {
			fmt.Fprintf(&b, "%d,%d\n", f.src[i], f.dst[i])
		}
		writeFile(t, dir, "edges/edge.csv", b.String())
	}
	if f.numpyEdges { // as DGL's own test data: float64 features
		wide := make([]float64, len(f.feat))
		for i, x := range f.feat {
			wide[i] = float64(x)
		}
		save("data/node-feat.npy", wide, f.n, 3)
	} else {
		save("data/node-feat.npy", f.feat, f.n, 3)
	}
	save("data/edge-feat.npy", make([]float64, len(f.src)), int64(len(f.src)))
	labelFeature := ""
	if f.labelFeat {
		save("data/node-label.npy", f.label, f.n)
		labelFeature = "  - domain: node\n    name: label\n    format: numpy\n    path: data/node-label.npy\n"
	}
	sets := ""
	for _, s := range []struct {
		name  string
		seeds []int64
	}{{"train", f.train}, {"validation", f.valid}, {"test", f.test}} {
		labels := make([]int64, len(s.seeds))
		for i, v := range s.seeds {
			labels[i] = f.label[v]
		}
		save("set/"+s.name+"-seeds.npy", s.seeds, int64(len(s.seeds)))
		save("set/"+s.name+"-labels.npy", labels, int64(len(labels)))
		sets += fmt.Sprintf(`    %s_set:
      - type: null
        data:
          - name: seeds
            format: numpy
            in_memory: true
            path: set/%s-seeds.npy
          - name: labels
            format: numpy
            path: set/%s-labels.npy
`, s.name, s.name, s.name)
	}
	writeFile(t, dir, MetadataFile, fmt.Sprintf(`dataset_name: graphbolt_fixture
graph:
  nodes:
    - num: %d
  edges:
%sfeature_data:
  - domain: node
    name: feat
    format: numpy
    in_memory: false
    path: data/node-feat.npy
  - domain: edge
    type: null
    name: feat
    format: numpy
    path: data/edge-feat.npy
%stasks:
  - name: node_classification
    num_classes: 3
%s`, f.n, edges, labelFeature, sets))
	return dir
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantEdges is the number of entries of the fixture's graph symmetrized,
// without self loops and repeats.
func (f *fixture) wantEdges() int64 {
	seen := map[[2]int64]bool{}
	for i := range f.src {
		u, v := f.src[i], f.dst[i]
		if u != v {
			seen[[2]int64{u, v}], seen[[2]int64{v, u}] = true, true
		}
	}
	return int64(len(seen))
}

// TestImportFixture imports the fixture with CSV and numpy edges, with
// labels from the sets and from a node feature, writes it and checks the
// counts of the written dataset.
func TestImportFixture(t *testing.T) {
	for _, tc := range []struct{ numpyEdges, labelFeat bool }{{false, false}, {true, true}} {
		t.Run(fmt.Sprintf("numpy edges %v, label feature %v", tc.numpyEdges, tc.labelFeat), func(t *testing.T) {
			f := newFixture(40)
			f.numpyEdges, f.labelFeat = tc.numpyEdges, tc.labelFeat
			d, err := Import(f.write(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != "graphbolt_fixture" || d.Graph.NumNodes != f.n || d.Graph.NumEdges() != f.wantEdges() {
				t.Fatalf("%s: %d vertices, %d edges; want graphbolt_fixture, %d, %d", d.Name, d.Graph.NumNodes, d.Graph.NumEdges(), f.n, f.wantEdges())
			}
			if d.FeatDim != 3 || !slices.Equal(d.Features, f.feat) || d.NumClasses != 3 {
				t.Fatalf("features dim %d, classes %d: want the fixture's 3 and 3", d.FeatDim, d.NumClasses)
			}
			if !slices.Equal(d.Train, f.train) || !slices.Equal(d.Valid, f.valid) || !slices.Equal(d.Test, f.test) {
				t.Fatalf("sets %v %v %v", d.Train, d.Valid, d.Test)
			}
			for v, c := range d.Labels {
				labelled := tc.labelFeat || slices.Contains(slices.Concat(f.train, f.valid, f.test), int64(v))
				if (labelled && int64(c) != f.label[v]) || (!labelled && c != -1) {
					t.Fatalf("vertex %d: label %d, want %d (labelled %v)", v, c, f.label[v], labelled)
				}
			}
			out := filepath.Join(t.TempDir(), "g")
			if err := dataset.Write(out, d); err != nil {
				t.Fatal(err)
			}
			m, err := dataset.ReadManifest(filepath.Join(out, dataset.ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			if m.NumNodes != f.n || m.NumEdges != f.wantEdges() || m.NumTrain != 6 || m.NumValid != 3 || m.NumTest != 3 || m.FeatDim != 3 || m.NumClasses != 3 {
				t.Fatalf("written manifest %+v", m)
			}
		})
	}
}

// TestRefusals checks the layouts and entries Import refuses, and that
// each message names the entry.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"torch features", func(t *testing.T, dir string) {
			editMetadata(t, dir, "format: numpy\n    in_memory: false\n    path: data/node-feat.npy", "format: torch\n    path: data/node-feat.pt")
		}, []string{"feature_data[0] (feat)", "format: torch", "node-feat.pt"}},
		{"preprocessed topology", func(t *testing.T, dir string) {
			editMetadata(t, dir, "graph:\n  nodes:\n    - num: 40\n  edges:\n    - format: csv\n      path: edges/edge.csv\n",
				"graph_topology:\n  type: FusedCSCSamplingGraph\n  path: preprocessed/fused_csc_sampling_graph.pt\n")
		}, []string{"graph_topology", "FusedCSCSamplingGraph", "PyTorch", "graph: section"}},
		{"heterogeneous", func(t *testing.T, dir string) {
			editMetadata(t, dir, "    - format: csv\n", "    - type: paper:cites:paper\n      format: csv\n")
		}, []string{"homogeneous", "paper:cites:paper"}},
		{"bad edge", func(t *testing.T, dir string) {
			writeFile(t, dir, "edges/edge.csv", "0,1\n1,2\n2,forty\n")
		}, []string{"edge.csv: line 3, column 2 (dst)", `"forty"`}},
		{"link prediction seeds", func(t *testing.T, dir string) {
			if err := npy.WriteFile(filepath.Join(dir, "set/train-seeds.npy"), []int64{0, 1, 2, 3}, []int64{2, 2}); err != nil {
				t.Fatal(err)
			}
		}, []string{"tasks[0].train_set[0].data[0] (seeds)", "node classification"}},
		{"seed out of range", func(t *testing.T, dir string) {
			if err := npy.WriteFile(filepath.Join(dir, "set/test-seeds.npy"), []int64{9, 10, 400}, []int64{3}); err != nil {
				t.Fatal(err)
			}
		}, []string{"test-seeds.npy", "element 2: 400 is not a vertex"}},
		{"no metadata", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, MetadataFile))
		}, []string{"no metadata.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newFixture(40).write(t)
			tc.edit(t, dir)
			_, err := Import(dir, Options{})
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// editMetadata replaces old by new in the fixture's metadata.yaml.
func editMetadata(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, MetadataFile)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), old) {
		t.Fatalf("metadata.yaml lacks %q:\n%s", old, text)
	}
	writeFile(t, dir, MetadataFile, strings.Replace(string(text), old, new, 1))
}
