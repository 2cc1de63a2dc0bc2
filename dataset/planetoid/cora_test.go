package planetoid

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
)

// coraDir returns the Planetoid Cora folder: $FANOUT_CORA_DIR, or
// ../shared/datasets/planetoid-cora relative to the repository root.
func coraDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("FANOUT_CORA_DIR"); dir != "" {
		return dir
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "datasets", "planetoid-cora")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func TestCora(t *testing.T) {
	dir := coraDir(t)
	if _, err := os.Stat(filepath.Join(dir, "ind.cora.graph")); err != nil {
		t.Skipf("Planetoid Cora not found at %q (set FANOUT_CORA_DIR to the folder with ind.cora.*): %v", dir, err)
	}
	d, err := Import(dir, "cora")
	if err != nil {
		t.Fatal(err)
	}
	g := d.Graph
	if g.NumNodes != 2708 || g.NumEdges() != 10556 {
		t.Errorf("graph: %d vertices, %d edges; want 2708, 10556", g.NumNodes, g.NumEdges())
	}
	if d.FeatDim != 1433 || len(d.Features) != 2708*1433 {
		t.Errorf("features: dim %d, %d values; want 1433, %d", d.FeatDim, len(d.Features), 2708*1433)
	}
	if d.NumClasses != 7 {
		t.Errorf("classes: %d, want 7", d.NumClasses)
	}
	if len(d.Train) != 140 || len(d.Valid) != 500 || len(d.Test) != 1000 {
		t.Errorf("split: %d/%d/%d, want 140/500/1000", len(d.Train), len(d.Valid), len(d.Test))
	}
	if d.Train[0] != 0 || d.Valid[0] != 140 || d.Test[0] != 1708 || d.Test[999] != 2707 {
		t.Errorf("split bounds: train from %d, valid from %d, test %d..%d", d.Train[0], d.Valid[0], d.Test[0], d.Test[999])
	}
	perClass := make([]int, d.NumClasses)
	for v, l := range d.Labels {
		if l < 0 || int(l) >= d.NumClasses {
			t.Fatalf("vertex %d has label %d", v, l)
		}
		perClass[l]++
	}
	// The Cora class sizes (Planetoid release).
	want := []int{351, 217, 418, 818, 426, 298, 180}
	for c := range want {
		if perClass[c] != want[c] {
			t.Errorf("class sizes %v, want %v", perClass, want)
			break
		}
	}
	checkHomophily(t, d)
	if err := d.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// Binary bag-of-words features: every row has at least one word.
	for v := 0; v < 2708; v++ {
		sum := float32(0)
		for _, x := range d.Features[v*1433 : (v+1)*1433] {
			if x != 0 && x != 1 {
				t.Fatalf("vertex %d has feature value %v", v, x)
			}
			sum += x
		}
		if sum == 0 {
			t.Fatalf("vertex %d has no features", v)
		}
	}
}

// checkHomophily checks that there are no self loops and that the label
// homophily is Cora's published 0.81: it would collapse if the rows of ty
// were placed at the wrong vertices.
func checkHomophily(t *testing.T, d *dataset.Dataset) {
	t.Helper()
	g := d.Graph
	same := 0
	for v := int64(0); v < g.NumNodes; v++ {
		for _, u := range g.Neighbors32(v) {
			if int64(u) == v {
				t.Fatalf("self loop at %d", v)
			}
			if d.Labels[u] == d.Labels[v] {
				same++
			}
		}
	}
	if h := float64(same) / float64(g.NumEdges()); h < 0.80 || h > 0.82 {
		t.Errorf("edge homophily %.3f, want 0.81", h)
	}
	sameTest := 0
	for _, v := range d.Test {
		for _, u := range g.Neighbors32(v) {
			if d.Labels[u] == d.Labels[v] {
				sameTest++
			}
		}
	}
	t.Logf("edge homophily %.3f overall, %.3f around test vertices", float64(same)/float64(g.NumEdges()), float64(sameTest)/float64(g.Indptr[2708]-g.Indptr[1708]))
	if h := float64(sameTest) / float64(g.Indptr[2708]-g.Indptr[1708]); h < 0.75 {
		t.Errorf("edge homophily around test vertices %.3f, want about 0.8", h)
	}
}
