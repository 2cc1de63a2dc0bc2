package edgelist

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/npy"
)

// TestImportNPYNodes: features and labels as .npy arrays in id order, the
// edges' ids their rows; an id past the rows is refused, naming it.
func TestImportNPYNodes(t *testing.T) {
	dir := t.TempDir()
	n := 10
	feat := make([]float64, n*3)
	labels := make([]int64, n)
	for v := range n {
		feat[3*v] = float64(v)
		labels[v] = int64(v % 2)
	}
	fp, lp := filepath.Join(dir, "feat.npy"), filepath.Join(dir, "label.npy")
	if err := npy.WriteFile(fp, feat, []int64{int64(n), 3}); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(lp, labels, []int64{int64(n)}); err != nil {
		t.Fatal(err)
	}
	var eb strings.Builder
	eb.WriteString("src,dst\n")
	for v := range n {
		fmt.Fprintf(&eb, "%d,%d\n", v, (v+1)%n)
	}
	ep := writeText(t, dir, "edges.csv", eb.String())
	o := opts(fp)
	o.Label = lp
	d, err := Import([]string{ep}, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Graph.NumNodes != int64(n) || d.Graph.NumEdges() != int64(2*n) || d.FeatDim != 3 || d.Features[3*4] != 4 || d.IDs != nil {
		t.Fatalf("%d vertices, %d edges, dim %d, ids %v", d.Graph.NumNodes, d.Graph.NumEdges(), d.FeatDim, d.IDs)
	}
	bad := writeText(t, dir, "bad.csv", "src,dst\n1,2\n3,10\n")
	if _, err = Import([]string{bad}, o); err == nil || !strings.Contains(err.Error(), `row 2 (line 3), column "dst": id "10" is not a row of`) {
		t.Fatalf("an id past the rows: %v", err)
	}
	o.Label = "label"
	if _, err = Import([]string{ep}, o); err == nil || !strings.Contains(err.Error(), "--label names a .npy file") {
		t.Fatalf("--label a column: %v", err)
	}
}
