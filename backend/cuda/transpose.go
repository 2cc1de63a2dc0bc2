package cuda

import (
	"github.com/fanout-gnn/fanout/backend"
)

// TransposeBlock groups blk's live edges by source into t (see
// kernels/transpose.cu): by default a counting sort with integer atomics (a
// memset and three launches; the order within a source is arbitrary), with
// Options.Deterministic the stable sort of the deterministic aggregation
// backward, written into t (each source's edges in edge order).
func (b *Backend) TransposeBlock(blk *backend.Block, t backend.Transposed) {
	c, ck := b.checkTransposeBlock(blk, t)
	defer c.end()
	if !c.ok {
		return
	}
	a, sp, pm, ed := ck.blk, ck.tSrcPtr, ck.tPerm, ck.tEdgeDst
	ptrBytes := int64(a.srcCap+1) * 4
	if b.opt.Deterministic {
		if _, ok := c.sortBySource(a, detSorted{srcPtr: sp.addr(), perm: pm.addr(), edgeDst: ed.addr()}); !ok && c.ok {
			c.memset(sp.addr(), 0, ptrBytes) // no sources: no edges
		}
		return
	}
	cnt := c.scratch(scratchCSC, ptrBytes)
	if !c.ok {
		return
	}
	c.memset(cnt, 0, ptrBytes)
	g, th := c.warpRows(a.dstCap)
	for _, fill := range []bool{false, true} {
		if fill {
			c.scan(cnt, sp.addr(), 0, a.srcCap+1, 0, 0, 0, 0)
		}
		c.launchCscEdges(&ck, fill, cnt, g, th, 0)
	}
}

// AggregateConcatBackward gathers each live source's gradient through t and
// passes it back through act in one launch (cat_bwd_act, kernels/
// transpose.cu), then adds the bias gradient's partial sums (column_sums).
// Its sums follow t's order, so with Options.Deterministic (a stable t) the
// result is bitwise reproducible.
func (b *Backend) AggregateConcatBackward(blk *backend.Block, t backend.Transposed, edgeW, dcat backend.Buffer, dim int, act backend.ActGrad, dx backend.Buffer) {
	c, ck := b.checkAggregateConcatBackward(blk, t, edgeW, dcat, dim, act, dx)
	defer c.end()
	a, dc, ys, ms, dxs, dbs := ck.blk, ck.dcat, ck.actY, ck.actMask, ck.dx, ck.actDBias
	if c.ok && dxs.overlaps(dc) {
		c.failf("dx overlaps dcat")
	}
	if !c.ok {
		return
	}
	halfY, halfDx := ys != nil && ys.dt == backend.BF16, dxs.dt == backend.BF16
	vec := dim%4 == 0 && dc.ptr%16 == 0 && dxs.ptr%actAlign(halfDx) == 0 &&
		(ys == nil || ys.ptr%actAlign(halfY) == 0) && (ms == nil || ms.ptr%4 == 0)
	name, words := "cat_bwd_act1", dim
	if vec {
		name, words = "cat_bwd_act4", dim/4
	}
	colBlocks := (words + catWords - 1) / catWords
	chunkRows, chunks := c.colsumChunks(a.srcCap, colBlocks, catChunkRows, 8)
	var partial uintptr
	if dbs != nil {
		partial = c.scratch(scratchColsum, int64(chunks)*int64(dim)*4)
	}
	c.launchCatBwdAct(&ck, name, words, halfY, halfDx, partial, chunkRows, dim3{uint32(colBlocks), uint32(chunks), 1}, dim3{32, catWarps, 1}, 0)
	if dbs != nil {
		c.columnSums(chunkRows, dim, colsum{partial, a.ns, a.srcCap, dbs.addr()})
	}
}

// Sizes matching kernels/transpose.cu: a cat_bwd_act block has catWarps
// warps (CAT_WARPS) and takes catWords words of each row (32·CAT_NC), and
// a chunk of rows gives each warp at least one. The column blocks and the
// chunks share the grid's budget of eight blocks per multiprocessor:
// measured faster than one block for all columns, and than twice the
// blocks (docs/perf.md).
const (
	catWarps     = 8
	catWords     = 32
	catChunkRows = catWarps
)
