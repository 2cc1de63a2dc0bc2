package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

// importEdges runs `fanout import edges ARGS`.
func importEdges(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return fanout(t, append([]string{"import", "edges"}, args...)...)
}

// edgeListFixture writes a node table and an edge list of n vertices with
// ids prefix+"0", prefix+"1", ... (integers where prefix is ""): two
// features, class i%3 planted in the first, each vertex linked to the next
// two.
func edgeListFixture(t *testing.T, dir, prefix string, n int) (nodes, edges string) {
	t.Helper()
	var nb, eb strings.Builder
	nb.WriteString("id,label,f0,f1\n")
	eb.WriteString("src,dst\n")
	for i := range n {
		fmt.Fprintf(&nb, "%s%d,%d,%d,%d\n", prefix, i, i%3, i%3, i%5)
		fmt.Fprintf(&eb, "%[1]s%[2]d,%[1]s%[3]d\n%[1]s%[2]d,%[1]s%[4]d\n", prefix, i, (i+1)%n, (i+2)%n)
	}
	nodes, edges = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "edges.csv")
	if err := os.WriteFile(nodes, []byte(nb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edges, []byte(eb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return nodes, edges
}

// TestImportEdgesInfoTrain: the example command imports a dataset
// that info reads and train trains; the ids are kept.
func TestImportEdgesInfoTrain(t *testing.T) {
	dir := t.TempDir()
	nodes, edges := edgeListFixture(t, dir, "u", 90)
	out := filepath.Join(dir, "g")
	args := []string{edges, "--src", "src", "--dst", "dst", "--nodes", nodes, "--id", "id", "--label", "label", "--out", out,
		"--train-per-class", "10", "--valid", "20", "--test", "20"}
	code, stdout, stderr := importEdges(t, args...)
	if code != 0 || !strings.Contains(stdout, "90 vertices, 360 edges, 30/20/20 train/valid/test") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	ids, err := dataset.ReadIDs(out)
	if err != nil || ids.Strings == nil || ids.Strings[7] != "u7" {
		t.Fatalf("ids: %+v, %v", ids, err)
	}
	if code, _, stderr = importEdges(t, args...); code == 0 || !strings.Contains(stderr, "already holds a dataset; pass --force") {
		t.Fatalf("a second import without --force: exit %d, %s", code, stderr)
	}
	code, stdout, stderr = fanout(t, "info", out)
	if code != 0 || !strings.Contains(stdout, "vertices   90") || !strings.Contains(stdout, "classes    3") ||
		!strings.Contains(stdout, "ids        the original ids in ids.txt (strings)") {
		t.Fatalf("info: exit %d\n%s%s", code, stdout, stderr)
	}
	trainEvalKeyed(t, dir, out)
	ints := filepath.Join(dir, "ints")
	if err := os.Mkdir(ints, 0o755); err != nil {
		t.Fatal(err)
	}
	nodes, edges = edgeListFixture(t, ints, "", 60)
	out = filepath.Join(ints, "g")
	if code, _, stderr = importEdges(t, edges, "--nodes", nodes, "--out", out, "--train-per-class", "10", "--valid", "5", "--test", "5"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	trainEvalKeyed(t, ints, out)
}

// trainEvalKeyed trains a run on the dataset in out for one epoch and
// checks that eval's predictions and embeddings come with the dataset's
// original ids beside them.
func trainEvalKeyed(t *testing.T, dir, out string) {
	t.Helper()
	run := filepath.Join(dir, "run")
	code, stdout, stderr := fanout(t, "train", "--data", out, "--device", "cpu", "--epochs", "1", "--out", run)
	if code != 0 || !strings.Contains(stdout, "test accuracy") {
		t.Fatalf("train: exit %d\n%s%s", code, stdout, stderr)
	}
	preds, emb := filepath.Join(dir, "p.npy"), filepath.Join(dir, "e.npy")
	code, stdout, stderr = fanout(t, "eval", "--checkpoint", filepath.Join(run, "best.ckpt"), "--data", out, "--device", "cpu",
		"--predictions", preds, "--embeddings", emb)
	if code != 0 {
		t.Fatalf("eval: exit %d\n%s%s", code, stdout, stderr)
	}
	ids, err := dataset.ReadIDs(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p", "e"} {
		if ids.Strings != nil {
			b, err := os.ReadFile(filepath.Join(dir, p+".ids.txt"))
			if err != nil || string(b) != strings.Join(ids.Strings, "\n")+"\n" {
				t.Errorf("%s.ids.txt: %v, want the dataset's ids a line each", p, err)
			}
			continue
		}
		got, _, err := npy.ReadFile(filepath.Join(dir, p+".ids.npy"))
		if err != nil || !slices.Equal(got.([]int64), ids.Ints) || ids.Ints[7] != 7 {
			t.Errorf("%s.ids.npy: %v, want the dataset's integer ids", p, err)
		}
	}
}

// TestImportEdgesRefusals: bad flags and inputs are one line each, and
// nothing is left in --out.
func TestImportEdgesRefusals(t *testing.T) {
	dir := t.TempDir()
	nodes, edges := edgeListFixture(t, dir, "u", 30)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("src,dst\nu1,u2\nu3,nobody\n"), 0o644)
	out := filepath.Join(dir, "g")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--nodes FILE is required", []string{edges, "--out", out}},
		{"--weight w: a fanout dataset's graph is unweighted", []string{edges, "--nodes", nodes, "--out", out, "--weight", "w"}},
		{"--seed draws a split, but --split s names a split column", []string{edges, "--nodes", nodes, "--out", out, "--split", "s", "--seed", "2"}},
		{`bad.csv: row 2 (line 3), column "dst": id "nobody" is not in the node table`, []string{bad, "--nodes", nodes, "--out", out, "--valid", "1", "--test", "1"}},
		{"matches no file", []string{filepath.Join(dir, "none*.csv"), "--nodes", nodes, "--out", out}},
		{"choose smaller split sizes (--train-per-class, --valid, --test, or a --split column)", []string{edges, "--nodes", nodes, "--out", out}},
	} {
		code, _, stderr := importEdges(t, c.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, code, stderr, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%s holds %d entries after failed imports, want the 3 inputs", dir, len(entries))
	}
}

// TestImportEdgesKilled: an import killed (SIGKILL) while it reads, or
// while it writes, leaves no dataset in --out (or the one it was replacing,
// whole), and the next import removes what the killed write left.
func TestImportEdgesKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills imports of a 400k-edge list")
	}
	dir := t.TempDir()
	nodes, edges := edgeListFixture(t, dir, "user-", 200000)
	out := filepath.Join(dir, "g")
	args := []string{"import", "edges", edges, "--nodes", nodes, "--out", out, "--force", "--valid", "100", "--test", "100"}
	// importAfterKill imports, and checks that the killed write's
	// temporary folder is removed and none is left.
	importAfterKill := func() {
		t.Helper()
		code, _, stderr := fanout(t, args...)
		if code != 0 || !strings.Contains(stderr, "removed 1 temporary folder(s) that an interrupted write of") {
			t.Fatalf("import after a kill while writing: exit %d, %s", code, stderr)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".g.*")); len(m) > 0 {
			t.Fatalf("%v left after a complete import", m)
		}
	}
	killImport(t, args, dir, false)
	killImport(t, args, dir, true)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("the killed imports left %s", out)
	}
	importAfterKill()
	killImport(t, args, dir, true)
	d, err := dataset.Open(out) // the dataset the killed write was replacing
	if err != nil {
		t.Fatalf("killed while replacing %s: %v", out, err)
	}
	d.Close()
	importAfterKill()
}

// killImport runs fanout args as a process and kills it: while it reads
// (30 ms in), or as soon as its temporary dataset folder in dir holds a
// file.
func killImport(t *testing.T, args []string, dir string, whileWriting bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FANOUT_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !whileWriting {
		time.Sleep(30 * time.Millisecond)
	}
	for deadline := time.Now().Add(time.Minute); whileWriting && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, ".g.tmp-*", "*.npy")); len(m) > 0 {
			break
		}
	}
	cmd.Process.Kill()
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the import ended before it was killed")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".g.tmp-*")); whileWriting && len(m) == 0 {
		t.Fatalf("killed while writing, but no temporary folder is left")
	}
}

// TestImportEdgesWithinMemory: --memory sorts the edges in runs on disk
// beside --out and writes the graph the in-memory import writes, leaving
// no scratch behind; a budget below the least is refused before any work.
func TestImportEdgesWithinMemory(t *testing.T) {
	dir := t.TempDir()
	nodes, edges := edgeListFixture(t, dir, "", 5000)
	args := []string{edges, "--nodes", nodes, "--train-per-class", "10", "--valid", "20", "--test", "20"}
	mem, bounded := filepath.Join(dir, "mem"), filepath.Join(dir, "bounded")
	if code, stdout, stderr := importEdges(t, append(args, "--out", mem)...); code != 0 {
		t.Fatalf("in memory: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := importEdges(t, append(args, "--out", bounded, "--memory", "64KiB")...)
	if code != 0 || !strings.Contains(stderr, "run(s) on disk") || strings.Contains(stderr, " 0 run(s)") {
		t.Fatalf("within 64 KiB: exit %d\n%s%s", code, stdout, stderr)
	}
	a, err := dataset.Open(mem)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dataset.Open(bounded)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Graph.Indptr, b.Graph.Indptr) || !slices.Equal(a.Graph.Indices, b.Graph.Indices) {
		t.Fatalf("the graph within 64 KiB differs from the in-memory import's")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Fatalf("scratch left beside --out: %v", left)
	}
	if code, _, stderr := importEdges(t, append(args, "--out", filepath.Join(dir, "x"), "--memory", "1KiB")...); code == 0 || !strings.Contains(stderr, "--memory") {
		t.Fatalf("--memory 1KiB: exit %d\n%s", code, stderr)
	}
}
