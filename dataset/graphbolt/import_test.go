package graphbolt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/graphbolt/graphbolttest"
	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
)

// wantEdges is the fixture's edge count once symmetrised, without self
// loops and repeats.
func wantEdges(f *graphbolttest.Fixture) int64 {
	seen := map[[2]int64]bool{}
	for i := range f.Src {
		u, v := f.Src[i], f.Dst[i]
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
			f := graphbolttest.New(40)
			f.NumpyEdges, f.LabelFeat = tc.numpyEdges, tc.labelFeat
			d, err := graphbolt.Import(f.Write(t), graphbolt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != "graphbolt_fixture" || d.Graph.NumNodes != f.N || d.Graph.NumEdges() != wantEdges(f) {
				t.Fatalf("%s: %d vertices, %d edges; want graphbolt_fixture, %d, %d", d.Name, d.Graph.NumNodes, d.Graph.NumEdges(), f.N, wantEdges(f))
			}
			if d.FeatDim != 3 || !slices.Equal(d.Features, f.Feat) || d.NumClasses != 3 {
				t.Fatalf("features dim %d, classes %d: want the fixture's 3 and 3", d.FeatDim, d.NumClasses)
			}
			if !slices.Equal(d.Train, f.Train) || !slices.Equal(d.Valid, f.Valid) || !slices.Equal(d.Test, f.Test) {
				t.Fatalf("sets %v %v %v", d.Train, d.Valid, d.Test)
			}
			for v, c := range d.Labels {
				labelled := tc.labelFeat || slices.Contains(slices.Concat(f.Train, f.Valid, f.Test), int64(v))
				if (labelled && int64(c) != f.Label[v]) || (!labelled && c != -1) {
					t.Fatalf("vertex %d: label %d, want %d (labelled %v)", v, c, f.Label[v], labelled)
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
			if m.NumNodes != f.N || m.NumEdges != wantEdges(f) || m.NumTrain != 6 || m.NumValid != 3 || m.NumTest != 3 || m.FeatDim != 3 || m.NumClasses != 3 {
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
		}, []string{`feature_data[0] ("feat")`, "format: torch", "node-feat.pt"}},
		{"preprocessed topology", func(t *testing.T, dir string) {
			editMetadata(t, dir, "graph:\n  nodes:\n    - num: 40\n  edges:\n    - format: csv\n      path: edges/edge.csv\n",
				"graph_topology:\n  type: FusedCSCSamplingGraph\n  path: preprocessed/fused_csc_sampling_graph.pt\n")
		}, []string{"graph_topology", "FusedCSCSamplingGraph", "PyTorch", "graph: section"}},
		{"heterogeneous", func(t *testing.T, dir string) {
			editMetadata(t, dir, "    - format: csv\n", "    - type: paper:cites:paper\n      format: csv\n")
		}, []string{"graph.nodes[0] has no type, but the graph is typed", "paper:cites:paper"}},
		{"bad edge", func(t *testing.T, dir string) {
			graphbolttest.WriteFile(t, dir, "edges/edge.csv", "0,1\n1,2\n2,forty\n")
		}, []string{"edge.csv: line 3, column 2 (dst)", `"forty"`}},
		{"link prediction seeds", func(t *testing.T, dir string) {
			if err := npy.WriteFile(filepath.Join(dir, "set/train-seeds.npy"), []int64{0, 1, 2, 3}, []int64{2, 2}); err != nil {
				t.Fatal(err)
			}
		}, []string{`tasks[0].train_set[0].data[0] ("seeds")`, "node classification"}},
		{"seed out of range", func(t *testing.T, dir string) {
			if err := npy.WriteFile(filepath.Join(dir, "set/test-seeds.npy"), []int64{9, 10, 400}, []int64{3}); err != nil {
				t.Fatal(err)
			}
		}, []string{"test-seeds.npy", "element 2: 400 is not a vertex"}},
		{"no metadata", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, graphbolt.MetadataFile))
		}, []string{"no metadata.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := graphbolttest.New(40).Write(t)
			tc.edit(t, dir)
			_, err := graphbolt.Import(dir, graphbolt.Options{})
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
	path := filepath.Join(dir, graphbolt.MetadataFile)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), old) {
		t.Fatalf("metadata.yaml lacks %q:\n%s", old, text)
	}
	graphbolttest.WriteFile(t, dir, graphbolt.MetadataFile, strings.Replace(string(text), old, new, 1))
}

// gzipEdges points the fixture's edge entry at edges/edge.csv.gz holding
// data, and returns that file's path.
func gzipEdges(t *testing.T, dir string, data []byte) string {
	t.Helper()
	editMetadata(t, dir, "path: edges/edge.csv", "path: edges/edge.csv.gz")
	path := filepath.Join(dir, "edges", "edge.csv.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGzipEdges: a gzip CSV edge file imports as the plain one does (DGL
// reads it so); plain text under a .gz name is said not to be gzip, and a
// stream cut short to be truncated, in one line naming the file.
func TestGzipEdges(t *testing.T) {
	f := graphbolttest.New(400)
	plainDir := f.Write(t)
	text, err := os.ReadFile(filepath.Join(plainDir, "edges", "edge.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := graphbolt.Import(plainDir, graphbolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gz := ogbtest.Gzip(t, string(text))

	dir := f.Write(t)
	gzipEdges(t, dir, gz)
	got, err := graphbolt.Import(dir, graphbolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Graph.NumEdges() != want.Graph.NumEdges() || !slices.Equal(got.Graph.Indices, want.Graph.Indices) {
		t.Errorf("gzip edges: %d edges, want the plain file's %d", got.Graph.NumEdges(), want.Graph.NumEdges())
	}

	dir = f.Write(t)
	path := gzipEdges(t, dir, text)
	_, err = graphbolt.Import(dir, graphbolt.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), path+": not a gzip file") {
		t.Errorf("plain text named .gz: %v; want it named as not gzip", err)
	}

	dir = f.Write(t)
	path = gzipEdges(t, dir, gz[:len(gz)/2])
	_, err = graphbolt.Import(dir, graphbolt.Options{})
	if !errors.Is(err, gzipfile.ErrTruncated) || !strings.HasPrefix(err.Error(), path+": ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("truncated gzip: %v; want one line naming %s as truncated", err, path)
	}
}
