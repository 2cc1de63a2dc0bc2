package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt/graphbolttest"
)

// TestImportGraphBoltInfoTrain: a dataset in DGL's GraphBolt on-disk layout
// imports, info reports its counts, and train trains on it.
func TestImportGraphBoltInfoTrain(t *testing.T) {
	src := graphbolttest.New(60).Write(t)
	out := filepath.Join(t.TempDir(), "g")
	code, stdout, stderr := fanout(t, "import", "graphbolt", src, "--out", out)
	if code != 0 || !strings.Contains(stdout, "60 vertices") || !strings.Contains(stdout, "6/3/3 train/valid/test") {
		t.Fatalf("import graphbolt: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = fanout(t, "info", out)
	if code != 0 || !strings.Contains(stdout, "60") || !strings.Contains(stdout, "graphbolt_fixture") {
		t.Fatalf("info: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = fanout(t, "train", "--data", out, "--device", "cpu", "--epochs", "2", "--batch", "4")
	if code != 0 || !strings.Contains(stdout+stderr, "test accuracy") {
		t.Fatalf("train: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr = fanout(t, "import", "graphbolt", src, "--out", filepath.Join(t.TempDir(), "h"), "--feature", "nope"); code == 0 || !strings.Contains(stderr, "nope") {
		t.Fatalf("--feature nope: exit %d\n%s", code, stderr)
	}
}
