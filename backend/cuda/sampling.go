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
	c.args().ptr(in).ptr(out).ptr(lenP).i32(lenCap).i32(lenAdd).ptr(totalP).ptr(addP).i32(addCap).ptr(status).ptr(ctr)
	c.launch("scan_array", d1(uint32(tiles)), d1(256), 0)
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
	c := b.begin("SampleLayer")
	defer c.end()
	dg := c.graph(g)
	nd := c.count("nDst", nDst)
	ds := c.buf("dst", dst, backend.I32, nDst.Cap)
	clock, k0, k1 := c.clock(r)
	if c.ok && out == nil {
		c.failf("out: nil block")
	}
	if !c.ok {
		return
	}
	indptr := c.buf("out.Indptr", out.Indptr, backend.I32, nDst.Cap+1)
	nbrs := c.buf("out.Nbrs", out.Nbrs, backend.I32, out.NumEdges.Cap)
	src := c.buf("out.SrcIDs", out.SrcIDs, backend.I32, out.NumSrc.Cap)
	ne := c.count("out.NumEdges", out.NumEdges)
	if out.NumSrc.Cap < 0 {
		c.failf("out.NumSrc: negative capacity %d", out.NumSrc.Cap)
	}
	if !c.ok {
		return
	}
	tiles, status, ctr := c.scanState(nDst.Cap + 1)
	c.args().ptr(dg.indptr.addr()).ptr(dg.rowDeg.addr()).i64(dg.numNodes).ptr(ds.ptr).ptr(nd).i32(nDst.Cap).i32(fanout).
		ptr(dg.skip.addr()).ptr(indptr.ptr).ptr(ne).ptr(status).ptr(ctr)
	c.launch("sample_count_scan", d1(uint32(tiles)), d1(256), 0)

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
	c.args().ptr(dg.indptr.addr()).ptr(dg.indices.addr()).ptr(dg.rowAddr.addr()).ptr(dg.rowDeg.addr()).i64(dg.numNodes).ptr(ds.ptr).ptr(nd).i32(nDst.Cap).
		i32(fanout).ptr(indptr.ptr).ptr(nbrs.addr()).i32(out.NumEdges.Cap).u32(k0).u32(k1).ptr(clock).u32(r.Stream).
		ptr(src.addr()).i32(out.NumSrc.Cap).ptr(b.errDev)
	c.launch(name, d1(c.blocks(int64(nDst.Cap), dsts)), d1(uint32(32*warps)), smem)
	if dg.kind != nil {
		c.args().ptr(ds.ptr).ptr(nd).i32(nDst.Cap).i64(dg.numNodes).ptr(dg.kind.ptr).ptr(dg.skip.addr()).ptr(dg.reads.ptr)
		c.launch("count_reads", d1(c.blocks(int64(nDst.Cap), 256)), d1(256), 0)
	}
}

// Relabel assigns local ids (see kernels/relabel.cu): destinations keep
// 0..NumDst-1, new neighbours get the next ids in order of first appearance
// in out.Nbrs. It writes out.SrcIDs past the destinations (the ids that
// fit), out.Indices for the live edges and the true source count into
// out.NumSrc. Deterministic; three launches (claim first positions, flag and
// scan them, write) and a scratch array of NumEdges.Cap+1 int32s.
func (b *Backend) Relabel(g backend.Graph, out *backend.Block) {
	c := b.begin("Relabel")
	defer c.end()
	dg := c.graph(g)
	if c.ok && out == nil {
		c.failf("out: nil block")
	}
	if !c.ok {
		return
	}
	nd := c.count("out.NumDst", out.NumDst)
	ne := c.count("out.NumEdges", out.NumEdges)
	ns := c.count("out.NumSrc", out.NumSrc)
	src := c.buf("out.SrcIDs", out.SrcIDs, backend.I32, out.NumSrc.Cap)
	nbrs := c.buf("out.Nbrs", out.Nbrs, backend.I32, out.NumEdges.Cap)
	ind := c.buf("out.Indices", out.Indices, backend.I32, out.NumEdges.Cap)
	if !c.ok {
		return
	}
	dstCap, srcCap, edgeCap := out.NumDst.Cap, out.NumSrc.Cap, out.NumEdges.Cap
	pos := c.scratch(scratchRelabel, int64(edgeCap+1)*4)
	relmap, state := dg.relmap.addr(), dg.relState.addr()

	c.args().ptr(src.addr()).ptr(nd).i32(dstCap).i32(srcCap).ptr(nbrs.addr()).ptr(ne).i32(edgeCap).
		ptr(relmap).i64(dg.numNodes).ptr(state).ptr(b.errDev)
	c.launch("relabel_claim", d1(c.blocks(int64(dstCap)+int64(edgeCap), 256)), d1(256), 0)
	tiles, status, ctr := c.scanState(edgeCap + 1)
	c.args().ptr(nd).i32(dstCap).i32(srcCap).ptr(nbrs.addr()).ptr(ne).i32(edgeCap).ptr(relmap).
		i64(dg.numNodes).ptr(state).ptr(pos).ptr(ns).ptr(status).ptr(ctr)
	c.launch("relabel_flag_scan", d1(uint32(tiles)), d1(256), 0)
	c.args().ptr(nd).i32(dstCap).ptr(src.addr()).i32(srcCap).ptr(nbrs.addr()).ptr(ne).i32(edgeCap).
		ptr(relmap).i64(dg.numNodes).ptr(state).ptr(pos).ptr(ind.addr())
	c.launch("relabel_write", d1(c.blocks(int64(edgeCap), 256)), d1(256), 0)
}

// MaskGraph is a view of g whose vertices v with skip[v] >= 0 have no
// neighbours as SampleLayer's destinations (see backend.Sampling); it
// shares g's memory and Relabel's table.
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	c := b.begin("MaskGraph")
	defer c.end()
	dg := c.graph(g)
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
