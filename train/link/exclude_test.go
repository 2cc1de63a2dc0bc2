package link

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// stepLeaks issues one training step's sampling and counts the sampled
// edges, over every hop, that are one of the step's positive edges (x, w)
// = (u, v) or its reverse (v, u).
func stepLeaks(t *testing.T, ds *dataset.Dataset, cfg train.Config) (self, reverse, positives int) {
	t.Helper()
	tr := newTrainer(t, cpu.New(2), ds, cfg, train.Options{})
	p := stepPlan(t, tr, 0)
	if err := tr.Backend().Sync(); err != nil {
		t.Fatal(err)
	}
	b := p.Task.(*batch)
	n := int(cpu.I32(b.positives.Buf)[b.positives.Off])
	ends := cpu.I32(b.ends)
	pos := map[[2]int32]bool{}
	for i := range n {
		pos[[2]int32{ends[i], ends[n+i]}] = true
	}
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
