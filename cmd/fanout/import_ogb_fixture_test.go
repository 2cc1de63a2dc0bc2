package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ogblFixture holds the OGB link datasets that scripts/make_ogbl_fixture.py
// writes with PyTorch (its OUT folder, copied here): ogbl-collab's and
// ogbl-citation2's layouts with split files from torch.save itself.
const ogblFixture = "testdata/ogbl-fixture"

// TestImportOGBLinkFixture: each dataset of the fixture imports with the
// link task its expected.json counts (vertices, features, undirected
// training edges, held-out edges kept and dropped, negatives per held-out
// edge), and train --task link trains on it and evaluates.
func TestImportOGBLinkFixture(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(ogblFixture, "*", "expected.json"))
	if _, statErr := os.Stat(ogblFixture); errors.Is(statErr, fs.ErrNotExist) {
		t.Skipf("%s is absent: run python3 scripts/make_ogbl_fixture.py OUT where PyTorch is installed and copy OUT to cmd/fanout/%s", ogblFixture, ogblFixture)
	}
	if err != nil || len(dirs) == 0 {
		t.Fatalf("%s holds no dataset with an expected.json (%v)", ogblFixture, err)
	}
	for _, exp := range dirs {
		src := filepath.Dir(exp)
		t.Run(filepath.Base(src), func(t *testing.T) {
			var want struct {
				Nodes, Valid, Test, Negatives, Dropped int
				FeatDim                                int `json:"feat_dim"`
				TrainEdges                             int `json:"train_edges"`
			}
			b, err := os.ReadFile(exp)
			if err == nil {
				err = json.Unmarshal(b, &want)
			}
			if err != nil || want.Nodes == 0 {
				t.Fatalf("%s: %v (read %+v)", exp, err, want)
			}
			data := filepath.Join(t.TempDir(), "data")
			code, out, stderr := fanout(t, "import", "ogb", src, "--out", data)
			line := fmt.Sprintf("link task of %d/%d/%d train/valid/test edges, %d fixed negatives", want.TrainEdges, want.Valid, want.Test, want.Negatives)
			if code != 0 || !strings.Contains(out, line) {
				t.Fatalf("import ogb %s: exit %d, want %q\n%s%s", src, code, line, out, stderr)
			}
			ds := openData(t, data)
			dropped := fmt.Sprintf("%d held-out edges dropped", want.Dropped)
			if ds.Graph.NumNodes != int64(want.Nodes) || ds.FeatDim != want.FeatDim || !strings.Contains(ds.Source, dropped) {
				t.Errorf("%d vertices, %d features, source %q; want %d, %d and %q", ds.Graph.NumNodes, ds.FeatDim, ds.Source, want.Nodes, want.FeatDim, dropped)
			}
			code, out, stderr = fanout(t, "train", "--data", data, "--task", "link", "--device", "cpu", "--model", "gcn", "--epochs", "2",
				"--epoch-steps", "3", "--batch", "32", "--fanouts", "5,5", "--hidden", "16", "--out", filepath.Join(t.TempDir(), "run"))
			if code != 0 || !strings.Contains(out, "test ROC-AUC ") || !strings.Contains(stderr, "epoch 2/2 ") {
				t.Fatalf("train --task link on %s: exit %d\n%s%s", src, code, out, stderr)
			}
		})
	}
}
