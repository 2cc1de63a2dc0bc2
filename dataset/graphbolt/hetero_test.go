package graphbolt_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/graphbolt/graphbolttest"
	"github.com/fanout-gnn/fanout/dataset/internal/typedtest"
	"github.com/fanout-gnn/fanout/graph/graphtest"
)

// TestImportTyped imports the typed fixture: its types in the metadata's
// order, the paper features, the target's labels and sets, the relations
// with the reverse of writes and cites made undirected.
func TestImportTyped(t *testing.T) {
	h := graphbolttest.Hetero{Papers: 10, Authors: 4}
	d, err := graphbolt.Import(h.Write(t), graphbolt.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(d.Types) != 2 || d.Types[0].Name != "paper" || d.Types[1].Name != "author" || d.Target != 0 || d.Types[1].FeatDim != 0 {
		t.Fatalf("types %+v, target %d", d.Types, d.Target)
	}
	if d.FeatDim != 2 || !slices.Equal(d.Types[0].Features[:6], []float32{0, 0, 1, 0.5, 2, 1}) || d.NumClasses != 3 {
		t.Errorf("features %v, %d classes", d.Types[0].Features, d.NumClasses)
	}
	if !slices.Equal(d.Train, []int64{0, 1, 2, 3}) || !slices.Equal(d.Test, []int64{6, 7}) || d.Labels[5] != 2 || d.Labels[9] != -1 {
		t.Errorf("sets %v %v %v, labels %v", d.Train, d.Valid, d.Test, d.Labels)
	}
	names := typedtest.RelationNames(d)
	if !slices.Equal(names, []string{"(author, writes, paper)", "(paper, cites, paper)", "(paper, rev_writes, author)"}) {
		t.Fatalf("relations %q", names)
	}
	writes := [][]int32{{0}, {0, 1}, {1, 2}, {2, 3}, {3}, {}, {}, {}, {}, {}}
	cites := [][]int32{{1, 9}, {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}, {6, 8}, {7, 9}, {0, 8}}
	revWrites := [][]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}}
	for i, want := range [][][]int32{writes, cites, revWrites} {
		if got := graphtest.Rows(d.Relations[i].Graph); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: rows %v, want %v", names[i], got, want)
		}
	}
	plain, err := graphbolt.Import(h.Write(t), graphbolt.Options{NoReverse: true})
	if err != nil || len(plain.Relations) != 2 || plain.Relations[1].Graph.NumEdges() != 10 {
		t.Fatalf("without reverses: %v", err)
	}
}

// TestTypedRefusals: what the typed import refuses, each message naming
// the entry.
func TestTypedRefusals(t *testing.T) {
	h := graphbolttest.Hetero{Papers: 10, Authors: 4}
	for _, tc := range []struct {
		name     string
		old, new string
		o        graphbolt.Options
		want     string
	}{
		{"edge type", "type: author:writes:paper", "type: author:writes", graphbolt.Options{}, `graph.edges[0]: type "author:writes", want source:relation:destination`},
		{"unknown type", "type: paper:cites:paper", "type: paper:cites:venue", graphbolt.Options{}, `graph.edges[1]: type "paper:cites:venue" joins a type that graph.nodes does not list`},
		{"relation name", "type: author:writes:paper", "type: author:wri.tes:paper", graphbolt.Options{}, `the relation "wri.tes" holds "."`},
		{"edge out of range", "num: 4\n", "num: 3\n", graphbolt.Options{}, `writes.csv: line 7, column 1 (src): "3" is not a vertex id in [0, 3)`},
		{"seeds of two types", "      - type: paper\n        data:\n          - name: seeds\n            format: numpy\n            path: set/test-seeds.npy",
			"      - type: author\n        data:\n          - name: seeds\n            format: numpy\n            path: set/test-seeds.npy", graphbolt.Options{},
			`tasks[0].test_set has 1 parts, the first of type "author": a node classification task's seeds are the target's, paper`},
		{"featureless count", "num: 4\n", "num: 2000000000\n", graphbolt.Options{}, "type author has no features and 2000000000 vertices, but its relations name it 8 times"},
		{"directed", "", "", graphbolt.Options{Directed: true}, "typed relations keep their direction"},
		{"target", "", "", graphbolt.Options{Target: "venue"}, `the target type "venue" is not among graph.nodes' types`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := h.Write(t)
			if tc.old != "" {
				editMetadata(t, dir, tc.old, tc.new)
			}
			_, err := graphbolt.Import(dir, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, tc.want)
			}
		})
	}
	if _, err := graphbolt.Import(graphbolttest.New(40).Write(t), graphbolt.Options{NoReverse: true}); err == nil || !strings.Contains(err.Error(), "--no-reverse are for typed graphs") {
		t.Errorf("--no-reverse on a graph of one type: %v", err)
	}
}
