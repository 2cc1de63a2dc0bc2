package traintest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/planetoid"
)

// Cora imports Planetoid Cora with its features row-normalised, from
// $FANOUT_CORA_DIR or the shared datasets folder beside the repository
// (root is the repository's root relative to the test's package, e.g.
// "../.."), or skips the test without the files.
func Cora(t testing.TB, root string) *dataset.Dataset {
	t.Helper()
	dir := os.Getenv("FANOUT_CORA_DIR")
	if dir == "" {
		dir = filepath.Join(root, "..", "shared", "datasets", "planetoid-cora")
	}
	if _, err := os.Stat(filepath.Join(dir, "ind.cora.graph")); err != nil {
		t.Skipf("Planetoid Cora not found at %s (set FANOUT_CORA_DIR): %v", dir, err)
	}
	ds, err := planetoid.Import(dir, "cora")
	if err != nil {
		t.Fatal(err)
	}
	ds.NormalizeFeatures()
	return ds
}
