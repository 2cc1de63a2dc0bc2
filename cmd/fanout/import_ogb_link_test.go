package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
)

// TestImportOGBLinkTrain: an OGB link-prediction folder (raw CSVs and .pt
// split files) imports with its link task, which info shows and train
// --task link trains for an epoch; --link-split on it is refused.
func TestImportOGBLinkTrain(t *testing.T) {
	dir := t.TempDir()
	l := ogbtest.Link{Nodes: 120, Negatives: 3, Citation: true}
	src := ogbtest.WriteLink(t, filepath.Join(dir, "ogbl-ring"), l)
	data := filepath.Join(dir, "ring")
	train, valid, test := l.Counts()
	code, out, stderr := fanout(t, "import", "ogb", src, "--out", data)
	want := fmt.Sprintf("link task of %d/%d/%d train/valid/test edges, 3 fixed negatives", train, valid, test)
	if code != 0 || !strings.Contains(out, "wrote ogbl-ring") || !strings.Contains(out, want) {
		t.Fatalf("import: exit %d, want %q\n%s%s", code, want, out, stderr)
	}
	if code, out, stderr := fanout(t, "info", data); code != 0 || !strings.Contains(out, "3 fixed negatives") {
		t.Errorf("info: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = fanout(t, "train", "--data", data, "--task", "link", "--device", "cpu", "--epochs", "1",
		"--batch", "32", "--fanouts", "3,3", "--hidden", "8", "--out", filepath.Join(dir, "run"))
	if code != 0 || !strings.Contains(out, "test ROC-AUC ") || !strings.Contains(stderr, "epoch 1/1 ") {
		t.Fatalf("train --task link: exit %d\n%s%s", code, out, stderr)
	}
	oneLineError(t, "comes with its own link task", "import", "ogb", src, "--out", filepath.Join(dir, "again"), "--link-split", "0.8,0.1,0.1")
	oneLineError(t, "train it with --task link", "train", "--data", data, "--device", "cpu", "--epochs", "1")
}
