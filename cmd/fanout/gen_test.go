package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
)

// TestGenTyped generates hetero-tiny: info shows its types, relations and
// target; without reverses it has the schema's four relations; train
// refuses it, saying why, for now.
func TestGenTyped(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ht")
	code, out, stderr := fanout(t, "gen", "hetero-tiny", "--out", data)
	if code != 0 || !strings.Contains(out, "wrote hetero-tiny to "+data+": 7300 vertices") {
		t.Fatalf("gen: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = fanout(t, "info", data)
	for _, want := range []string{"vertices   7,300 of 4 types", "(author, writes, paper) 9,000 edges", "(paper, rev_writes, author) 9,000 edges",
		"classes    8 (target paper)", "split      train 1,000  valid 500  test 1,000"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("info: exit %d, lacks %q\n%s%s", code, want, out, stderr)
		}
	}
	plain := filepath.Join(dir, "plain")
	if code, _, stderr := fanout(t, "gen", "hetero-tiny", "--no-reverse", "--seed", "2", "--out", plain); code != 0 {
		t.Fatalf("gen --no-reverse: %s", stderr)
	}
	d, err := dataset.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Relations) != 4 || d.Relations[1].Graph.NumEdges() != 15_000 {
		t.Errorf("--no-reverse: %d relations, cites %d edges", len(d.Relations), d.Relations[1].Graph.NumEdges())
	}
}

// TestGenCommunity writes tiny with community labels: the preset's name,
// size and split, a source that says so; the flags that do not apply are
// refused before any work.
func TestGenCommunity(t *testing.T) {
	data := filepath.Join(t.TempDir(), "tc")
	if code, _, stderr := fanout(t, "gen", "tiny", "--labels", "community", "--out", data); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	d, err := dataset.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Name != "tiny" || d.Graph.NumNodes != 1<<14 || !strings.Contains(d.Source, "labels community") || len(d.Train) != 3276 {
		t.Errorf("name %q, %d vertices, source %q, %d training vertices", d.Name, d.Graph.NumNodes, d.Source, len(d.Train))
	}
	out := filepath.Join(t.TempDir(), "x")
	oneLineError(t, `--labels "votes": want neighbours or community`, "gen", "tiny", "--labels", "votes", "--out", out)
	oneLineError(t, "--labels neighbours: hetero-tiny is a typed preset", "gen", "hetero-tiny", "--labels", "neighbours", "--out", out)
	oneLineError(t, "--no-reverse: tiny is a graph of one type", "gen", "tiny", "--no-reverse", "--out", out)
	oneLineError(t, "--link-split: mag-sim is a typed preset", "gen", "mag-sim", "--link-split", "0.8,0.1,0.1", "--out", out)
}

// TestGenFeatDim: gen --feat-dim writes a one-type preset's features at
// the width asked; a typed preset, or a width below 1, is refused naming
// the flag.
func TestGenFeatDim(t *testing.T) {
	data := filepath.Join(t.TempDir(), "wide")
	if code, _, stderr := fanout(t, "gen", "tiny", "--feat-dim", "8", "--out", data); code != 0 {
		t.Fatalf("gen --feat-dim 8: %s", stderr)
	}
	d, err := dataset.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.FeatDim != 8 || len(d.Features) != 8*int(d.NumVertices()) {
		t.Errorf("--feat-dim 8: width %d, %d values for %d vertices", d.FeatDim, len(d.Features), d.NumVertices())
	}
	for _, args := range [][]string{{"hetero-tiny", "--feat-dim", "8"}, {"tiny", "--feat-dim", "0"}} {
		code, _, stderr := fanout(t, append([]string{"gen"}, append(args, "--out", filepath.Join(t.TempDir(), "x"))...)...)
		if code == 0 || !strings.Contains(stderr, "--feat-dim") {
			t.Errorf("gen %v: exit %d, %q; want a refusal naming --feat-dim", args, code, stderr)
		}
	}
}
