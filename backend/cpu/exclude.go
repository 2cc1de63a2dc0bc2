package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
	"github.com/fanout-gnn/fanout/sample"
)

// exclusionOf views an exclusion buffer of a step of capacity positives
// (backend.ExclusionSize) as package sample's Exclusion.
func exclusionOf(excl []int64, capacity int) *sample.Exclusion {
	keys := 2 * capacity
	return &sample.Exclusion{Keys: excl[:keys], Buckets: excl[keys:backend.ExclusionSize(capacity)]}
}

// BuildExclusion writes the exclusion of a step's positives (and, with
// reverse, their reverses) with package sample's BuildExclusion; see
// backend.Sampling.
func (b *Backend) BuildExclusion(g backend.Graph, ends backend.Buffer, n backend.Count, reverse bool, excl backend.Buffer) {
	c, ck := b.checkBuildExclusion(g, ends, n, reverse, excl)
	defer c.end()
	if !c.ok {
		return
	}
	live, es, csr := ck.n, ck.ends, ck.g.root().csr
	for i, v := range es[:2*live] {
		if v < 0 || int64(v) >= csr.NumNodes {
			c.raise(errcode.ExcludeID, i, int(v), int(csr.NumNodes))
			return
		}
	}
	sample.BuildExclusion(csr, es[:live], es[live:2*live], reverse, *exclusionOf(ck.excl, n.Cap))
}

// SampleExcluding is SampleLayer with the exclusion excl taken out of the
// rows before sampling (package sample's LayerExcluding); see
// backend.Sampling.
func (b *Backend) SampleExcluding(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block, n backend.Count, excl backend.Buffer) {
	c, ck := b.checkSampleExcluding(g, dst, nDst, fanout, r, out, n, excl)
	defer c.end()
	if !c.ok {
		return
	}
	c.sample(ck.g, ck.dst[:ck.nDst], fanout, ck.r, out, ck.outIndptr, ck.outNbrs, ck.outSrcIDs, ck.outNumEdgesP, exclusionOf(ck.excl, n.Cap))
}
