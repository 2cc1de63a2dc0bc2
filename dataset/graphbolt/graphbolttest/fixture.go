// Package graphbolttest writes small datasets in DGL's GraphBolt on-disk
// layout for the tests of the importer and of the command line.
package graphbolttest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

// Fixture is a small homogeneous graph in GraphBolt's on-disk layout.
type Fixture struct {
	N          int64
	Src, Dst   []int64
	Feat       []float32 // [n, 3]
	Label      []int64   // [n]
	Train      []int64
	Valid      []int64
	Test       []int64
	NumpyEdges bool // edges as a [2, m] .npy file instead of CSV
	LabelFeat  bool // labels as a node feature too
}

// New is a ring of n vertices with chords, a self loop and a
// repeated edge; three classes.
func New(n int64) *Fixture {
	f := &Fixture{N: n}
	for v := range n {
		f.Src, f.Dst = append(f.Src, v), append(f.Dst, (v+1)%n)
		if v%3 == 0 {
			f.Src, f.Dst = append(f.Src, (v+5)%n), append(f.Dst, v)
		}
		f.Feat = append(f.Feat, float32(v), float32(v)/2, 1)
		f.Label = append(f.Label, v%3)
	}
	f.Src, f.Dst = append(f.Src, 4, 0), append(f.Dst, 4, 1) // a self loop, a repeat of 0->1
	f.Train, f.Valid, f.Test = []int64{0, 1, 2, 3, 4, 5}, []int64{6, 7, 8}, []int64{9, 10, 11}
	return f
}

// Write writes the fixture's files and metadata.yaml, as DGL's
// documentation lays them out, into a new directory.
func (f *Fixture) Write(t testing.TB) string {
	t.Helper()
	dir, save := newLayout(t)
	edges := "    - format: csv\n      path: edges/edge.csv\n"
	if f.NumpyEdges {
		save("edges/edge.npy", slices.Concat(f.Src, f.Dst), 2, int64(len(f.Src)))
		edges = "    - format: numpy\n      path: edges/edge.npy\n"
	} else {
		var b strings.Builder
		for i := range f.Src {
			fmt.Fprintf(&b, "%d,%d\n", f.Src[i], f.Dst[i])
		}
		WriteFile(t, dir, "edges/edge.csv", b.String())
	}
	if f.NumpyEdges { // as DGL's own test data: float64 features
		wide := make([]float64, len(f.Feat))
		for i, x := range f.Feat {
			wide[i] = float64(x)
		}
		save("data/node-feat.npy", wide, f.N, 3)
	} else {
		save("data/node-feat.npy", f.Feat, f.N, 3)
	}
	save("data/edge-feat.npy", make([]float64, len(f.Src)), int64(len(f.Src)))
	labelFeature := ""
	if f.LabelFeat {
		save("data/node-label.npy", f.Label, f.N)
		labelFeature = "  - domain: node\n    name: label\n    format: numpy\n    path: data/node-label.npy\n"
	}
	sets := ""
	for _, s := range []struct {
		name  string
		seeds []int64
	}{{"train", f.Train}, {"validation", f.Valid}, {"test", f.Test}} {
		labels := make([]int64, len(s.seeds))
		for i, v := range s.seeds {
			labels[i] = f.Label[v]
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
	WriteFile(t, dir, graphbolt.MetadataFile, fmt.Sprintf(`dataset_name: graphbolt_fixture
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
%s`, f.N, edges, labelFeature, sets))
	return dir
}

// newLayout makes a new directory with the layout's folders (edges, data,
// set) and returns it with a function that saves a .npy file there.
func newLayout(t testing.TB) (string, func(name string, data any, shape ...int64)) {
	dir := t.TempDir()
	for _, sub := range []string{"edges", "data", "set"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, func(name string, data any, shape ...int64) {
		if err := npy.WriteFile(filepath.Join(dir, name), data, shape); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteFile writes text to the file name in dir.
func WriteFile(t testing.TB, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
