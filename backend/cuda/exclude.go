package cuda

import "github.com/fanout-gnn/fanout/backend"

// BuildExclusion writes a step's exclusion (kernels/exclude.cu) in two
// launches, a warp per pair: each pair's key, or -1 for a pair that is not
// in g or repeats an earlier one, into scratch (the keys and buckets
// emptied beside), then each key placed at its rank by (bucket, key) and
// the buckets' starts and counts. An end outside g is reported by Sync.
func (b *Backend) BuildExclusion(g backend.Graph, ends backend.Buffer, n backend.Count, reverse bool, excl backend.Buffer) {
	c, ck := b.checkBuildExclusion(g, ends, n, reverse, excl)
	defer c.end()
	if !c.ok {
		return
	}
	pairs := int64(2 * n.Cap)
	canon := c.scratch(scratchLink, max(pairs, 1)*8)
	if !c.ok {
		return
	}
	clear := int64(backend.ExclusionSize(n.Cap))
	c.launchExcludeKeys(&ck, canon, d1(c.blocks(max(32*pairs, clear), 256)), d1(256), 0)
	c.launchExcludeSort(&ck, canon, d1(c.blocks(max(32*pairs, 1), 256)), d1(256), 0)
}

// SampleExcluding is SampleLayer's launches with the exclusion excl
// taken out of the rows: a bucket look-up per destination in the count
// and in the fill, and for a destination with excluded entries a binary
// search among them per written neighbour.
func (b *Backend) SampleExcluding(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block, n backend.Count, excl backend.Buffer) {
	c, ck := b.checkSampleExcluding(g, dst, nDst, fanout, r, out, n, excl)
	defer c.end()
	if !c.ok {
		return
	}
	sl := sampleLayerArgs{hopArgs: ck.hopArgs}
	c.sample(&sl, exclusion{addr: ck.excl.addr(), keys: 2 * n.Cap, buckets: backend.ExclusionBuckets(n.Cap)})
}
