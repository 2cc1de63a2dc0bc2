package cuda

import (
	"github.com/fanout-gnn/fanout/backend"
)

// The ops of a GAT layer that aggregates before it projects
// (kernels/gat_first.cu): deterministic, fixed orders (a warp per
// destination; a thread per element for the block-diagonal copies).

// SharedAggregate: one warp per destination, the lanes over the row's
// columns, eight heads per pass from one read of each source row.
func (b *Backend) SharedAggregate(blk *backend.Block, coef, x backend.Buffer, heads, in int, out backend.Buffer) {
	c, ck := b.checkSharedAggregate(blk, coef, x, heads, in, out)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchSharedAgg(&ck, blk.Bipartite, x.DType() == backend.BF16, g, t, 0)
}

// SharedAggregateBackward: one warp per destination; per position and
// head a float64 warp sum.
func (b *Backend) SharedAggregateBackward(blk *backend.Block, x, dout backend.Buffer, heads, in int, dcoef backend.Buffer) {
	c, ck := b.checkSharedAggregateBackward(blk, x, dout, heads, in, dcoef)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchSharedAggBwd(&ck, blk.Bipartite, x.DType() == backend.BF16, g, t, 0)
}

// BlockDiag: a thread per element of wbd.
func (b *Backend) BlockDiag(w backend.Buffer, in, heads, dim int, wbd backend.Buffer) {
	c, ck := b.checkBlockDiag(w, in, heads, dim, wbd)
	defer c.end()
	if !c.ok {
		return
	}
	n := int64(heads) * int64(in) * int64(heads) * int64(dim)
	c.launchBlockDiag(&ck, d1(c.blocks(n, 256)), d1(256), 0)
}

// BlockDiagBackward: a thread per element of dw.
func (b *Backend) BlockDiagBackward(dwbd backend.Buffer, in, heads, dim int, dw backend.Buffer) {
	c, ck := b.checkBlockDiagBackward(dwbd, in, heads, dim, dw)
	defer c.end()
	if !c.ok {
		return
	}
	n := int64(in) * int64(heads) * int64(dim)
	c.launchBlockDiagBwd(&ck, d1(c.blocks(n, 256)), d1(256), 0)
}
