package rmat

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/internal/proxy"
)

// TestGenerateTinyInvariants checks counts and structure of the tiny preset.
func TestGenerateTinyInvariants(t *testing.T) {
	ds := generate(t, "tiny", 1, 2)
	g := ds.Graph
	if ds.Name != "tiny" || g.NumNodes != 1<<14 || ds.FeatDim != 32 || ds.NumClasses != 8 {
		t.Fatalf("name %q, %d vertices, dim %d, %d classes", ds.Name, g.NumNodes, ds.FeatDim, ds.NumClasses)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if e := g.NumEdges(); e > 2*200_000 || e < 300_000 {
		t.Fatalf("%d directed edges from 200,000 pairs", e)
	}
	for v := range g.NumNodes {
		row := g.Neighbors32(v)
		for i, u := range row {
			if int64(u) == v {
				t.Fatalf("self loop at %d", v)
			}
			if i > 0 && row[i-1] >= u {
				t.Fatalf("row %d not strictly ascending", v)
			}
			if _, ok := slices.BinarySearch(g.Neighbors32(int64(u)), int32(v)); !ok {
				t.Fatalf("edge %d->%d without its reverse", v, u)
			}
		}
		if l := ds.Labels[v]; (l < 0) != (len(row) == 0) || l >= 8 {
			t.Fatalf("vertex %d: degree %d, label %d", v, len(row), l)
		}
	}
	if len(ds.Features) != int(g.NumNodes)*32 || len(ds.Labels) != int(g.NumNodes) {
		t.Fatalf("%d features, %d labels", len(ds.Features), len(ds.Labels))
	}
	labelled := int64(0)
	for _, l := range ds.Labels {
		if l >= 0 {
			labelled++
		}
	}
	nt, nv := int64(0.2*float64(labelled)), int64(0.1*float64(labelled))
	if int64(len(ds.Train)) != nt || int64(len(ds.Valid)) != nv || int64(len(ds.Test)) != labelled-nt-nv {
		t.Fatalf("split %d/%d/%d of %d labelled", len(ds.Train), len(ds.Valid), len(ds.Test), labelled)
	}
	seen := map[int64]bool{}
	for _, s := range [][]int64{ds.Train, ds.Valid, ds.Test} {
		if !slices.IsSorted(s) {
			t.Fatal("split not sorted")
		}
		for _, v := range s {
			if seen[v] || ds.Labels[v] < 0 {
				t.Fatalf("vertex %d repeated or unlabelled in a split", v)
			}
			seen[v] = true
		}
	}
	counts := ClassCounts(ds.Labels, 8)
	if slices.Max(counts) > 2*slices.Min(counts) {
		t.Fatalf("classes unbalanced: %v", counts)
	}
}

// TestLabelsNeedTheGraph is the proxy for "a GNN beats the same model without
// neighbours": on tiny, nearest class mean over the mean of the neighbours'
// features must beat nearest class mean over a vertex's own features by a
// wide margin.
func TestLabelsNeedTheGraph(t *testing.T) {
	ds := generate(t, "tiny", 1, 0)
	own := proxy.CentroidAccuracy(ds, ds.Features, ds.FeatDim)
	nbr := proxy.CentroidAccuracy(ds, proxy.NeighbourMean(ds.Graph, ds.Features, ds.FeatDim), ds.FeatDim)
	t.Logf("nearest class mean: own features %.3f, neighbour mean %.3f; edge homophily %.3f",
		own, nbr, EdgeHomophily(ds.Graph, ds.Labels))
	if own > 0.3 || nbr < 0.5 || nbr-own < 0.3 {
		t.Fatalf("own features %.3f, neighbour mean %.3f: want own <= 0.3, neighbours >= 0.5, gap >= 0.3", own, nbr)
	}
}

func TestGenerateRejectsBadPresets(t *testing.T) {
	base, _ := Lookup("tiny")
	cases := []struct {
		edit func(p *Preset)
		want string
	}{
		{func(p *Preset) { p.Classes = 1 }, "classes"},
		{func(p *Preset) { p.Scale = 31 }, "scale 31"},
		{func(p *Preset) { p.A = 0.9 }, "R-MAT probabilities"},
		{func(p *Preset) { p.FeatDim = 0 }, "feature dimension"},
		{func(p *Preset) { p.SignalDim = -1 }, "signal width"},
		{func(p *Preset) { p.TrainFrac = 0.95 }, "split fractions"},
		{func(p *Preset) { p.NumTrain = 1 << 20 }, "exceeds"},
		{func(p *Preset) { p.NumTest = 1 << 20 }, "test vertices requested"},
	}
	for _, c := range cases {
		p := base
		c.edit(&p)
		_, err := Generate(p, Options{Seed: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tiny") {
			t.Errorf("got %v, want an error naming the preset and containing %q", err, c.want)
		}
	}
}

// fingerprint hashes every array of a dataset (FNV-1a over little-endian
// bytes).
func fingerprint(ds *dataset.Dataset) uint64 {
	h := fnv.New64a()
	for _, a := range []any{ds.Graph.Indptr, ds.Graph.Indices, ds.Features, ds.Labels, ds.Train, ds.Valid, ds.Test} {
		binary.Write(h, binary.LittleEndian, a)
	}
	return h.Sum64()
}

// TestTinyFingerprint pins the generator's output: the presets must be
// identical for everyone. If a change to the generator is intended, update
// the constant and say so (every saved tiny dataset changes with it).
func TestTinyFingerprint(t *testing.T) {
	const want uint64 = 0xd673e5619564f306
	if got := fingerprint(generate(t, "tiny", 1, 2)); got != want {
		t.Fatalf("tiny (seed 1) fingerprint %#x, want %#x", got, want)
	}
}
