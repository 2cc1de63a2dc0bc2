package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/npy"
)

// communityCSV writes a typed graph as CSV files: 2,000 papers (string
// ids, a label that is the paper's community of 4, and 8 features that
// show it weakly), 1,500 authors without features, 40 venues with 3
// features; authors write papers, papers cite papers and appear in
// venues, each edge within the paper's community 80% of the time. It
// returns import edges' flags.
func communityCSV(t *testing.T, dir string) []string {
	t.Helper()
	const papers, authors, venues, k = 2000, 1500, 40, 4
	rnd := rand.New(rand.NewPCG(7, 11))
	pick := func(n, c int) int { // a member of community c among n, or anyone
		if rnd.Float64() < 0.8 {
			return c + k*rnd.IntN(n/k)
		}
		return rnd.IntN(n)
	}
	var p, a, v, w, c, in strings.Builder
	p.WriteString("id,label,f0,f1,f2,f3,f4,f5,f6,f7\n")
	for i := range papers {
		fmt.Fprintf(&p, "p%d,%d", i, i%k)
		for f := range 8 {
			x := rnd.NormFloat64()
			if f == i%k {
				x += 0.6
			}
			fmt.Fprintf(&p, ",%.4f", x)
		}
		p.WriteString("\n")
	}
	a.WriteString("id\n")
	for i := range authors {
		fmt.Fprintf(&a, "a%d\n", i)
	}
	v.WriteString("id,g0,g1,g2\n")
	for i := range venues {
		fmt.Fprintf(&v, "v%d,%.3f,%.3f,%.3f\n", i, rnd.Float64(), rnd.Float64(), rnd.Float64())
	}
	w.WriteString("src,dst\n")
	c.WriteString("src,dst\n")
	in.WriteString("src,dst\n")
	for i := range papers {
		for range 3 {
			fmt.Fprintf(&w, "a%d,p%d\n", pick(authors, i%k), i)
			fmt.Fprintf(&c, "p%d,p%d\n", i, pick(papers, i%k))
		}
		fmt.Fprintf(&in, "p%d,v%d\n", i, pick(venues, i%k))
	}
	for name, text := range map[string]string{"paper.csv": p.String(), "author.csv": a.String(), "venue.csv": v.String(),
		"writes.csv": w.String(), "cites.csv": c.String(), "in.csv": in.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := func(name string) string { return filepath.Join(dir, name) }
	return []string{"--nodes", "paper=" + f("paper.csv"), "--nodes", "author=" + f("author.csv"), "--nodes", "venue=" + f("venue.csv"),
		"--edges", "author,writes,paper=" + f("writes.csv"), "--edges", "paper,cites,paper=" + f("cites.csv"),
		"--edges", "paper,appears_in,venue=" + f("in.csv"), "--target", "paper", "--label", "label",
		"--train-per-class", "200", "--valid", "300", "--test", "600", "--seed", "3"}
}

// TestTypedCSVTrains: a typed CSV graph of 3,540 vertices and three types
// imports, rsage, rgcn and rgat (four heads) train on it on the CPU far
// above the most common class (0.25), eval writes the predictions of the
// papers keyed by their string ids, and export writes PyTorch Geometric's
// names.
func TestTypedCSVTrains(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "g")
	code, stdout, stderr := fanout(t, append([]string{"import", "edges", "--out", data}, communityCSV(t, dir)...)...)
	if code != 0 || !strings.Contains(stdout, "3540 vertices") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	acc := regexp.MustCompile(`test accuracy ([0-9.]+)`)
	for _, model := range []string{"rsage", "rgcn", "rgat"} {
		run := filepath.Join(dir, "run-"+model)
		args := []string{"train", "--data", data, "--device", "cpu", "--model", model, "--epochs", "10",
			"--lr", "0.01", "--batch", "128", "--out", run}
		if model == "rgat" {
			args = append(args, "--heads", "4")
		}
		code, stdout, stderr := fanout(t, args...)
		m := acc.FindStringSubmatch(stdout)
		if code != 0 || m == nil {
			t.Fatalf("%s: exit %d\n%s%s", model, code, stdout, stderr)
		}
		t.Logf("%s: test accuracy %s", model, m[1])
		if v, _ := strconv.ParseFloat(m[1], 64); v < 0.6 {
			t.Errorf("%s: test accuracy %.4f, want at least 0.6 (the most common class is 0.25)", model, v)
		}
	}
	preds, emb := filepath.Join(dir, "p.npy"), filepath.Join(dir, "e.npy")
	code, stdout, stderr = fanout(t, "eval", "--checkpoint", filepath.Join(dir, "run-rgcn", "best.ckpt"), "--data", data, "--device", "cpu",
		"--predictions", preds, "--embeddings", emb)
	if code != 0 || !strings.Contains(stdout, "wrote 2000 predictions") {
		t.Fatalf("eval: exit %d\n%s%s", code, stdout, stderr)
	}
	// One file of embeddings per type, its rows keyed by the type's ids.
	for typ, rows := range map[string]int64{"paper": 2000, "author": 1500, "venue": 40} {
		f := filepath.Join(dir, "e."+typ+".npy")
		if _, shape, err := npy.ReadFile(f); err != nil || len(shape) != 2 || shape[0] != rows || shape[1] != 64 {
			t.Errorf("%s: shape %v (%v), want [%d 64]", f, shape, err, rows)
		}
		ids, err := os.ReadFile(filepath.Join(dir, "e."+typ+".ids.txt"))
		if err != nil || !strings.HasPrefix(string(ids), typ[:1]+"0\n"+typ[:1]+"1\n") {
			t.Errorf("%s's ids: %q %v", typ, string(ids)[:min(12, len(ids))], err)
		}
	}
	if _, shape, err := npy.ReadFile(preds); err != nil || len(shape) != 1 || shape[0] != 2000 {
		t.Fatalf("predictions: %v %v", shape, err)
	}
	ids, err := os.ReadFile(strings.TrimSuffix(preds, ".npy") + ".ids.txt")
	if err != nil || !strings.HasPrefix(string(ids), "p0\np1\n") {
		t.Fatalf("the predictions' ids: %q %v", string(ids)[:min(20, len(ids))], err)
	}
	model := filepath.Join(dir, "m.safetensors")
	code, stdout, stderr = fanout(t, "export", "--checkpoint", filepath.Join(dir, "run-rgcn", "best.ckpt"), model)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	raw, _ := os.ReadFile(model)
	for _, want := range []string{"gnn.convs.0.author__writes__paper.lin_l.weight", "gnn.lins.1.paper.bias", "embed.author.weight"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("export lacks %s", want)
		}
	}
}

// TestTypedRefusals: what typed graphs do not take yet is refused in one
// line naming the flag.
func TestTypedRefusals(t *testing.T) {
	data := filepath.Join(t.TempDir(), "h")
	if code, _, stderr := fanout(t, "gen", "hetero-tiny", "--out", data); code != 0 {
		t.Fatal(stderr)
	}
	base := []string{"train", "--data", data, "--device", "cpu", "--epochs", "1"}
	for _, c := range []struct {
		want  string
		extra []string
	}{
		{"devices: hetero-tiny is typed, and its type author has no features: its learned rows train on one device", []string{"--devices", "2"}},
		{"shard-features: hetero-tiny is typed, and typed graphs keep every feature table on every rank", []string{"--devices", "2", "--shard-features", "hosts"}},
		{"hot-ratio: 0.1: hetero-tiny is typed", []string{"--mode", "hybrid", "--hot-ratio", "0.1"}},
		{"devices: hetero-tiny is typed, and the hybrid mode trains typed graphs on one device", []string{"--mode", "hybrid", "--devices", "2"}},
		{`relation-fanouts: "likes" names no relation of hetero-tiny`, []string{"--relation-fanouts", "likes=1,1"}},
		{"full-eval: layer-wise inference is the one-type models'", []string{"--full-eval"}},
		{"bases: 2, but hetero-tiny's types have input rows of 2 widths", []string{"--model", "rgcn", "--bases", "2"}},
		{"model: sage is a model of one vertex type", []string{"--model", "sage"}},
	} {
		oneLineError(t, c.want, append(append([]string(nil), base...), c.extra...)...)
	}
	oneLineError(t, "bases: 2, but basis decomposition is rgcn's, for typed graphs (tiny", "train", "--preset", "tiny", "--device", "cpu", "--bases", "2")
	oneLineError(t, "model: rgcn is a typed graphs' model, and tiny has one vertex type", "train", "--preset", "tiny", "--device", "cpu", "--model", "rgcn")
}
