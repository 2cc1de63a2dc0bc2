package hybrid

import (
	"cmp"
	"slices"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// RankByAccess orders vertices by how often the step gathers their
// features, counted by a pre-sampling pass: it samples the given batches
// (seeds per step, with the training fanouts and the run's sampling key,
// epoch 0) with the CPU reference sampler and counts each vertex once per
// batch whose bottom layer reads it. That is an estimate of the expected
// accesses per epoch that accounts for the seeds, the fanouts and every
// hop, which degree alone does not. Vertices never read come last, by
// degree. Ties break by vertex id, so the order is deterministic.
func RankByAccess(g *graph.CSR, batches [][]int32, fanouts []int, seed uint64, threads int) ([]int32, error) {
	counts, err := AccessCounts(g, batches, fanouts, seed, threads)
	if err != nil {
		return nil, err
	}
	order := make([]int32, g.NumNodes)
	for v := range order {
		order[v] = int32(v)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(g.Degree(int64(b)), g.Degree(int64(a))); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order, nil
}

// AccessCounts is RankByAccess's pass: for each vertex, the number of the
// batches whose bottom layer reads it (with fanouts of L-1 hops: the
// batches whose bottom-layer destinations include it).
func AccessCounts(g *graph.CSR, batches [][]int32, fanouts []int, seed uint64, threads int) ([]int32, error) {
	s, err := sample.NewSampler(g, fanouts, threads)
	if err != nil {
		return nil, err
	}
	counts := make([]int32, g.NumNodes)
	var mb sample.MiniBatch
	for step, seeds := range batches {
		if len(seeds) == 0 {
			continue
		}
		if err := s.SampleInto(seeds, rng.Key{Seed: seed, Epoch: 0, Step: uint32(step)}, &mb); err != nil {
			return nil, err
		}
		for _, v := range mb.InputIDs() {
			counts[v]++
		}
	}
	return counts, nil
}
