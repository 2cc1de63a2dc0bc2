package cuda

import (
	"github.com/fanout-gnn/fanout/backend"
)

// scanTile is SCAN_TILE of kernels/scan.cuh: items per block.
const scanTile = 256 * 8

// scanState returns the look-back scan's scratch (two counters, then one
// state word per tile) for up to items items, zeroed when first made; the
// scan kernels leave it zeroed.
func (c *call) scanState(items int) (tiles int, status, ctr uintptr) {
	tiles = max(1, (items+scanTile-1)/scanTile)
	ctr = c.scratchZeroed(scratchScan, 16+int64(tiles)*8)
	return tiles, ctr + 16, ctr
}

// scan is an exclusive prefix sum of int32s from in to out (which may
// alias) over len = live(lenP, lenCap) + lenAdd elements (lenP 0: lenCap);
// the total plus live(addP, addCap) goes to totalP when non-zero. One launch.
func (c *call) scan(in, out, lenP uintptr, lenCap, lenAdd int, totalP, addP uintptr, addCap int) {
	tiles, status, ctr := c.scanState(lenCap + lenAdd)
	c.launchScanArray(in, out, lenP, lenCap, lenAdd, totalP, addP, addCap, status, ctr, d1(uint32(tiles)), d1(256), 0)
}

// SampleLayer samples up to fanout neighbours of each of the first nDst
// ids of dst, exactly as package sample does (see kernels/sample.cu). It
// writes out.Indptr [nDst.Cap+1] (rows past the live count are empty),
// out.Nbrs for the edges that fit, the true edge count into out.NumEdges,
// and copies dst into out.SrcIDs. Two launches: count with scan (one
// single-pass scan), fill. An id outside the graph is reported by Sync.
// Fanouts above 32 keep their draws in shared memory, 4 bytes each, and
// are limited by the device's shared memory per block (about 58,000 on an
// H100).
func (b *Backend) SampleLayer(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block) {
	c, ck := b.checkSampleLayer(g, dst, nDst, fanout, r, out)
	defer c.end()
	if c.ok {
		c.sample(&ck, exclusion{})
	}
}

// exclusion is a link step's exclusion as the sampling kernels take it
// (kernels/exclude.cuh): its address (0: none) and its keys and buckets.
type exclusion struct {
	addr          uintptr
	keys, buckets int
}

// sample issues SampleLayer's launches over checked arguments, with ex's
// entries taken out of the rows (SampleExcluding).
func (c *call) sample(ck *sampleLayerArgs, ex exclusion) {
	nDst, fanout := ck.nDst, ck.fanout
	tiles, status, ctr := c.scanState(nDst.Cap + 1)
	c.launchSampleCountScan(ck, ex.addr, ex.keys, ex.buckets, status, ctr, d1(uint32(tiles)), d1(256), 0)

	// warps per block, destinations per block, shared memory, kernel
	warps, dsts, smem, name := 8, 8, 0, "sample_fill"
	switch {
	case fanout >= 1 && fanout <= 8:
		dsts, name = 32, "sample_fill8" // 4 destinations per warp
	case fanout >= 9 && fanout <= 16:
		dsts, name = 16, "sample_fill16" // 2 destinations per warp
	case fanout > 32:
		per := 4 * fanout
		warps = max(1, min(8, (48<<10)/per))
		dsts, smem = warps, warps*per
		c.setSmem("sample_fill", smem)
	}
	c.launchSampleFill(ck, name, ex.addr, ex.keys, ex.buckets, d1(c.blocks(int64(nDst.Cap), dsts)), d1(uint32(32*warps)), smem)
	if ck.g.kind != nil {
		c.launchCountReads(ck, d1(c.blocks(int64(nDst.Cap), 256)), d1(256), 0)
	}
}

// Relabel assigns local ids (see kernels/relabel.cu): destinations keep
// 0..NumDst-1, new neighbours get the next ids in order of first appearance
// in out.Nbrs. It writes out.SrcIDs past the destinations (the ids that
// fit), out.Indices for the live edges and the true source count into
// out.NumSrc. Deterministic; three launches (claim first positions, flag and
// scan them, write) and a scratch array of NumEdges.Cap+1 int32s.
func (b *Backend) Relabel(g backend.Graph, out *backend.Block) {
	c, ck := b.checkRelabel(g, out)
	defer c.end()
	if !c.ok {
		return
	}
	dstCap, edgeCap := out.NumDst.Cap, out.NumEdges.Cap
	pos := c.scratch(scratchRelabel, int64(edgeCap+1)*4)
	c.launchRelabelClaim(&ck, d1(c.blocks(int64(dstCap)+int64(edgeCap), 256)), d1(256), 0)
	tiles, status, ctr := c.scanState(edgeCap + 1)
	c.launchRelabelFlagScan(&ck, pos, status, ctr, d1(uint32(tiles)), d1(256), 0)
	c.launchRelabelWrite(&ck, pos, d1(c.blocks(int64(edgeCap), 256)), d1(256), 0)
}

// MaskGraph is a view of g whose vertices v with skip[v] >= 0 have no
// neighbours as SampleLayer's destinations (see backend.Sampling); it
// shares g's memory and Relabel's table.
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	c := b.begin("MaskGraph")
	defer c.end()
	dg := c.graph("g", g)
	var x *buffer
	if c.ok {
		x = c.buf("skip", skip, backend.I32, int(dg.numNodes))
	}
	if !c.ok {
		return nil, b.err
	}
	view := *dg
	view.skip = x
	return &view, nil
}
