package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
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
	magOut := out
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
	// Both train (rsage, the default for a typed dataset).
	for name, data := range map[string]string{"graphbolt": out, "ogb": magOut} {
		code, stdout, stderr := fanout(t, "train", "--data", data, "--device", "cpu", "--epochs", "2", "--batch", "4")
		if code != 0 || !strings.Contains(stdout, "test accuracy") || !strings.Contains(stderr, "training rsage") {
			t.Errorf("train the imported %s dataset: exit %d\n%s%s", name, code, stdout, stderr)
		}
	}
}

// typedEdgeFixture writes node tables of papers (id, label, f) and authors
// (id only) and the edges writes (author -> paper) and cites (paper ->
// paper), and returns the typed flags that import them.
func typedEdgeFixture(t *testing.T, dir string) []string {
	t.Helper()
	var papers, authors, writes, cites strings.Builder
	papers.WriteString("id,label,f\n")
	authors.WriteString("id\n")
	writes.WriteString("src,dst\n")
	cites.WriteString("src,dst\n")
	for i := range 60 {
		fmt.Fprintf(&papers, "p%d,%d,%d\n", i, i%3, i%3)
		fmt.Fprintf(&cites, "p%d,p%d\n", i, (i+1)%60)
	}
	for a := range 20 {
		fmt.Fprintf(&authors, "a%d\n", a)
		fmt.Fprintf(&writes, "a%d,p%d\na%d,p%d\n", a, a, a, a+20)
	}
	files := map[string]string{"paper.csv": papers.String(), "author.csv": authors.String(), "writes.csv": writes.String(), "cites.csv": cites.String()}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--nodes", "paper=" + filepath.Join(dir, "paper.csv"), "--nodes", "author=" + filepath.Join(dir, "author.csv"),
		"--edges", "author,writes,paper=" + filepath.Join(dir, "writes.csv"), "--edges", "paper,cites,paper=" + filepath.Join(dir, "c*.csv"),
		"--target", "paper", "--train-per-class", "5", "--valid", "10", "--test", "10"}
}

// TestImportEdgesTyped: `import edges` with types writes a typed dataset,
// in memory and within --memory alike; info shows it; the typed flags are
// refused where they do not fit.
func TestImportEdgesTyped(t *testing.T) {
	dir := t.TempDir()
	args := typedEdgeFixture(t, dir)
	out := filepath.Join(dir, "typed")
	code, stdout, stderr := importEdges(t, append(args, "--out", out)...)
	if code != 0 || !strings.Contains(stdout, "wrote typed to "+out+": 80 vertices, 200 edges, 15/10/10 train/valid/test") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = fanout(t, "info", out)
	if code != 0 || !strings.Contains(stdout, "  author            20  no features (a learned embedding)  ids in types/author/ids.txt") ||
		!strings.Contains(stdout, "(paper, rev_writes, author) 40 edges") {
		t.Fatalf("info: exit %d\n%s", code, stdout)
	}
	ids, err := dataset.ReadTypeIDs(out, "author")
	if err != nil || ids.Strings[3] != "a3" {
		t.Fatalf("author ids %v, %v", ids, err)
	}
	bounded := filepath.Join(dir, "bounded")
	code, stdout, stderr = importEdges(t, append(args, "--out", bounded, "--memory", "64KiB", "--no-reverse")...)
	if code != 0 || !strings.Contains(stdout, "80 vertices, 100 edges") || !strings.Contains(stderr, "graph entries of 2 relations sorted") {
		t.Fatalf("import --memory --no-reverse: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := filepath.Join(dir, "bad")
	withArgs := func(more ...string) []string { return append(append([]string{"import", "edges"}, args...), more...) }
	oneLineError(t, "--target TYPE is required", append([]string{"import", "edges"}, append(slices.Clone(args[:8]), "--out", bad)...)...)
	oneLineError(t, `--edges "author,writes=x.csv": want SRC,REL,DST=FILE`, withArgs("--edges", "author,writes=x.csv", "--out", bad)...)
	oneLineError(t, "a typed import reads the edge files of --edges", withArgs(filepath.Join(dir, "cites.csv"), "--out", bad)...)
	oneLineError(t, "a typed import (--nodes TYPE=FILE) names its relations with --edges", "import", "edges", filepath.Join(dir, "cites.csv"),
		"--nodes", "paper="+filepath.Join(dir, "paper.csv"), "--out", bad)
	oneLineError(t, "--directed: typed relations keep their direction", withArgs("--directed", "--out", bad)...)
}
