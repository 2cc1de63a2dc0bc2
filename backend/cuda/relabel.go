package cuda

import "github.com/fanout-gnn/fanout/backend"

// RelabelStart begins relabelling the vertex space of space (see
// backend.Sampling and kernels/relabel.cu) in space's relabel table:
// srcIDs[:nDst] = dst[:nDst] (those that fit), nSrc = nDst, destination i
// claimed with key i in a new generation. One launch over nDst.Cap.
func (b *Backend) RelabelStart(space backend.Graph, dst backend.Buffer, nDst backend.Count, srcIDs backend.Buffer, nSrc backend.Count) {
	c, ck := b.checkRelabelStart(space, dst, nDst, srcIDs, nSrc)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchRelabelStart(&ck, d1(c.blocks(int64(nDst.Cap), 256)), d1(256), 0)
}

// RelabelAdd relabels blk.Nbrs[:NumEdges] into the space begun by the last
// RelabelStart on space (see backend.Sampling and kernels/relabel.cu): ids
// of the space keep their local ids, new ones are numbered after nSrc in
// order of first appearance. It writes blk.Indices, the new ids that fit
// into srcIDs and the true count into nSrc. Deterministic; three launches
// over NumEdges.Cap (claim, flag and scan, write) and a scratch array of
// NumEdges.Cap+2 int32s (the scan and the count before the call).
func (b *Backend) RelabelAdd(space backend.Graph, blk *backend.Block, srcIDs backend.Buffer, nSrc backend.Count) {
	c, ck := b.checkRelabelAdd(space, blk, srcIDs, nSrc)
	defer c.end()
	if !c.ok {
		return
	}
	edgeCap := blk.NumEdges.Cap
	pos := c.scratch(scratchRelabel, int64(edgeCap+2)*4)
	base := pos + uintptr(edgeCap+1)*4
	grid := d1(c.blocks(int64(edgeCap), 256))
	c.launchRelabelAddClaim(&ck, base, grid, d1(256), 0)
	tiles, status, ctr := c.scanState(edgeCap + 1)
	c.launchRelabelAddScan(&ck, pos, base, status, ctr, d1(uint32(tiles)), d1(256), 0)
	c.launchRelabelAddWrite(&ck, pos, base, grid, d1(256), 0)
}
