package link

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// sampledStep issues a training step's sampling on the CPU and returns its
// plan, its n positive edges (u, v) as a set, and with reverse their
// reverses (v, u) in it too.
func sampledStep(t *testing.T, ds *dataset.Dataset, cfg train.Config, step int, reverse bool) (*train.Plan, map[[2]int32]bool, int) {
	t.Helper()
	tr := newTrainer(t, cpu.New(2), ds, cfg, train.Options{})
	p := stepPlan(t, tr, step)
	if err := tr.Backend().Sync(); err != nil {
		t.Fatal(err)
	}
	b := p.Task.(*batch)
	n := int(cpu.I32(b.positives.Buf)[b.positives.Off])
	ends := cpu.I32(b.ends)
	pos := map[[2]int32]bool{}
	for i := range n {
		pos[[2]int32{ends[i], ends[n+i]}] = true
		if reverse {
			pos[[2]int32{ends[n+i], ends[i]}] = true
		}
	}
	return p, pos, n
}

// stepLeaks issues one training step's sampling and counts the sampled
// edges, over every hop, that are one of the step's positive edges (x, w)
// = (u, v) or its reverse (v, u).
func stepLeaks(t *testing.T, ds *dataset.Dataset, cfg train.Config) (self, reverse, positives int) {
	t.Helper()
	p, pos, n := sampledStep(t, ds, cfg, 0, false)
	for _, blk := range p.Blocks {
		nDst := int(cpu.I32(blk.NumDst.Buf)[blk.NumDst.Off])
		indptr, nbrs, ids := cpu.I32(blk.Indptr), cpu.I32(blk.Nbrs), cpu.I32(blk.SrcIDs)
		for d := range nDst {
			for _, w := range nbrs[indptr[d]:indptr[d+1]] {
				if pos[[2]int32{ids[d], w}] {
					self++
				}
				if pos[[2]int32{w, ids[d]}] {
					reverse++
				}
			}
		}
	}
	return self, reverse, n
}

// TestExcludeKeepsBatchEdgesOut: with --exclude reverse no hop of a step
// samples one of its positive edges in either direction, with self none
// in the stored direction, and with none (which the test needs to mean
// something) they are there.
func TestExcludeKeepsBatchEdgesOut(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	cfg.Fanouts = []int{-1, -1} // every neighbour: every positive edge is sampled unless excluded
	for _, c := range []struct {
		exclude            string
		self, reverse, any bool
	}{
		{train.ExcludeNone, true, true, true},
		{train.ExcludeSelf, false, true, true},
		{train.ExcludeReverse, false, false, false},
	} {
		cfg.Link.Exclude = c.exclude
		self, reverse, b := stepLeaks(t, ds, cfg)
		t.Logf("exclude %s: %d positives; sampled %d of them, %d reversed", c.exclude, b, self, reverse)
		if b != cfg.Batch || (self > 0) != c.self || (reverse > 0) != c.reverse {
			t.Errorf("exclude %s: %d positives, %d positive edges and %d reverses sampled", c.exclude, b, self, reverse)
		}
	}
}

// TestHeldOutEdgesNotInGraph: the validation and test edges are not in
// the graph the trainer samples from.
func TestHeldOutEdgesNotInGraph(t *testing.T) {
	ds := ringData(t, 400)
	for _, p := range [][]int32{ds.Link.Valid, ds.Link.Test} {
		for i := 0; i < dataset.Pairs(p); i++ {
			if u, v := p[2*i], p[2*i+1]; dataset.HasEdge(ds.Graph, u, v) || dataset.HasEdge(ds.Graph, v, u) {
				t.Fatalf("held-out edge (%d, %d) is in the message-passing graph", u, v)
			}
		}
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestExcludeSamplesWithout: every destination of every training hop
// samples its row with the step's positives (and their reverses) taken out
// before sampling: it gets min(fanout, d-e) neighbours (d its degree, e
// its excluded entries), so an endpoint whose remaining degree reaches the
// fanout still gets the whole fanout, none of them excluded; and a
// destination without excluded entries gets exactly what plain sampling
// (package sample's Layer, the hop's key) gives it.
func TestExcludeSamplesWithout(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	cfg.Fanouts = []int{2, 2}
	const step = 1
	p, gone, n := sampledStep(t, ds, cfg, step, true)
	L := len(cfg.Fanouts)
	var full, plain int // endpoints that kept the whole fanout, destinations checked against Layer
	for h, fanout := range cfg.Fanouts {
		blk := p.Blocks[L-1-h]
		nDst := int(cpu.I32(blk.NumDst.Buf)[blk.NumDst.Off])
		indptr, nbrs, ids := cpu.I32(blk.Indptr), cpu.I32(blk.Nbrs), cpu.I32(blk.SrcIDs)
		key := rng.Key{Seed: cfg.Seed, Step: step, Stream: uint32(h)}
		for d, x := range ids[:nDst] {
			row, got := ds.Graph.Neighbors32(int64(x)), nbrs[indptr[d]:indptr[d+1]]
			e := 0
			for _, w := range row {
				if gone[[2]int32{x, w}] {
					e++
				}
			}
			if want := min(fanout, len(row)-e); len(got) != want {
				t.Fatalf("hop %d: vertex %d (degree %d, %d excluded) sampled %d neighbours, want %d", h, x, len(row), e, len(got), want)
			}
			for _, w := range got {
				if gone[[2]int32{x, w}] || !slices.Contains(row, w) {
					t.Fatalf("hop %d: vertex %d sampled %d, excluded or no neighbour", h, x, w)
				}
			}
			if e > 0 && len(row)-e >= fanout {
				full++
			}
			if e == 0 {
				want := make([]int32, fanout)
				ptr := make([]int32, 2)
				want = want[:sample.Layer(ds.Graph, []int32{x}, fanout, key, ptr, want, 1)]
				if !slices.Equal(got, want) {
					t.Fatalf("hop %d: vertex %d, no endpoint, sampled %v; plain sampling gives %v", h, x, got, want)
				}
				plain++
			}
		}
	}
	t.Logf("%d positives: %d endpoints kept the whole fanout, %d other destinations equal plain sampling", n, full, plain)
	if full == 0 || plain == 0 {
		t.Errorf("the step has %d endpoints that keep the fanout and %d other destinations: the test checks nothing", full, plain)
	}
}
