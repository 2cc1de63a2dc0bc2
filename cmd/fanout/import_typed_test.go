package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt/graphbolttest"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
)

// TestImportTypedOGBAndGraphBolt: OGB's typed raw layout and a typed
// GraphBolt dataset import as typed datasets, with their reverses unless
// --no-reverse, the target named by --target where asked; info shows the
// relations; the flags typed datasets do not take are refused.
func TestImportTypedOGBAndGraphBolt(t *testing.T) {
	mag := ogbtest.WriteMAG(t, filepath.Join(t.TempDir(), "ogbn_mag"), ogbtest.MAG{Papers: 6, Authors: 4, Institutions: 2, Fields: 3, Classes: 3})
	out := filepath.Join(t.TempDir(), "mag")
	code, stdout, stderr := fanout(t, "import", "ogb", mag, "--out", out, "--target", "paper")
	if code != 0 || !strings.Contains(stdout, "wrote ogbn_mag to "+out+": 15 vertices") || !strings.Contains(stdout, "2/1/1 train/valid/test") {
		t.Fatalf("import ogb: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = fanout(t, "info", out)
	if code != 0 || !strings.Contains(stdout, "(paper, rev_writes, author) 8 edges") || !strings.Contains(stdout, "classes    3 (target paper)") {
		t.Fatalf("info: exit %d\n%s", code, stdout)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if code, stdout, stderr := fanout(t, "import", "ogb", mag, "--out", plain, "--no-reverse"); code != 0 || !strings.Contains(stdout, "15 vertices, 30 edges") {
		t.Fatalf("import ogb --no-reverse: exit %d\n%s%s", code, stdout, stderr)
	}
	oneLineError(t, "get their reverses (rev_<relation>) unless --no-reverse, instead of --symmetrize", "import", "ogb", mag, "--out", filepath.Join(t.TempDir(), "s"), "--symmetrize")
	oneLineError(t, "npz: --target and --no-reverse are for typed datasets", "import", "npz", "x.npz", "--out", filepath.Join(t.TempDir(), "n"), "--no-reverse")

	gb := graphbolttest.Hetero{Papers: 10, Authors: 4}.Write(t)
	out = filepath.Join(t.TempDir(), "gb")
	code, stdout, stderr = fanout(t, "import", "graphbolt", gb, "--out", out)
	if code != 0 || !strings.Contains(stdout, "wrote graphbolt_hetero to "+out+": 14 vertices, 36 edges, 4/2/2 train/valid/test") {
		t.Fatalf("import graphbolt: exit %d\n%s%s", code, stdout, stderr)
	}
	oneLineError(t, "dataset graphbolt_hetero is typed", "train", "--data", out, "--device", "cpu")
}
