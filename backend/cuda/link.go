package cuda

import "github.com/fanout-gnn/fanout/backend"

// EdgeSeeds writes a step's ends and draws the negatives (edge_seeds,
// kernels/link.cu): one launch. An edge id outside pairs is reported by
// Sync.
func (b *Backend) EdgeSeeds(pairs, ids backend.Buffer, n backend.Count, k, nodes int, dist backend.Buffer, r backend.Rand, ends backend.Buffer, nEnds, nPairs backend.Count) {
	c := b.begin("EdgeSeeds")
	defer c.end()
	nP := c.count("n", n)
	c.dim("nodes", nodes)
	if err := backend.CheckNegatives(k); c.ok && err != nil {
		c.failf("%v", err)
	}
	ps := c.buf("pairs", pairs, backend.I32, 0)
	is := c.buf("ids", ids, backend.I32, n.Cap)
	es := c.buf("ends", ends, backend.I32, n.Cap*(2+k))
	ds := c.optBuf("dist", dist, backend.I32, nodes+1)
	clock, k0, k1 := c.clock(r)
	se := c.count("nEnds", nEnds)
	sp := c.count("nPairs", nPairs)
	if !c.ok {
		return
	}
	c.args().ptr(ps.ptr).i32(ps.n / 2).ptr(is.ptr).ptr(nP).i32(n.Cap).i32(k).i32(nodes).ptr(ds.addr()).
		u32(k0).u32(k1).ptr(clock).u32(r.Stream).ptr(es.ptr).ptr(se).ptr(sp).ptr(b.errDev)
	c.launch("edge_seeds", d1(c.blocks(int64(n.Cap)*int64(1+k), 256)), d1(256), 0)
}

// ExcludeEdges removes the batch's positive edges from a sampled hop
// (kernels/link.cu): the pairs go into an open-addressing table in
// scratch (two launches), each destination's row is saved and its
// remaining neighbours counted, a scan gives the new offsets and the edge
// count, and the remaining neighbours are written in order.
func (b *Backend) ExcludeEdges(blk *backend.Block, ends backend.Buffer, n backend.Count, reverse bool, scratch backend.Buffer) {
	c := b.begin("ExcludeEdges")
	defer c.end()
	a := c.block(blk)
	nP := c.count("n", n)
	es := c.buf("ends", ends, backend.I32, 2*n.Cap)
	size := backend.ExcludeScratch(n.Cap)
	tab := c.buf("scratch", scratch, backend.I64, size)
	var nbrs, ids *buffer
	if c.ok {
		nbrs = c.buf("blk.Nbrs", blk.Nbrs, backend.I32, a.edgeCap)
		ids = c.buf("blk.SrcIDs", blk.SrcIDs, backend.I32, a.dstCap)
	}
	if !c.ok {
		return
	}
	ptrs := int64(a.dstCap + 1)
	keep := c.scratch(scratchLink, (2*ptrs+int64(a.edgeCap))*4)
	if !c.ok {
		return
	}
	saved := keep + uintptr(ptrs*4)
	savedNbrs := saved + uintptr(ptrs*4)
	c.args().ptr(tab.ptr).i32(size)
	c.launch("exclude_clear", d1(c.blocks(int64(size), 256)), d1(256), 0)
	c.args().ptr(es.ptr).ptr(nP).i32(n.Cap).flag(reverse).ptr(tab.ptr).i32(size)
	c.launch("exclude_insert", d1(c.blocks(int64(n.Cap), 256)), d1(256), 0)
	c.args().ptr(a.indptr.ptr).ptr(nbrs.ptr).ptr(ids.ptr).ptr(a.nd).i32(a.dstCap).ptr(a.ne).i32(a.edgeCap).
		ptr(tab.ptr).i32(size).ptr(keep).ptr(saved).ptr(savedNbrs)
	c.launch("exclude_count", d1(c.blocks(ptrs, 256)), d1(256), 0)
	c.scan(keep, a.indptr.ptr, a.nd, a.dstCap, 1, a.ne, 0, 0)
	c.args().ptr(ids.ptr).ptr(a.nd).i32(a.dstCap).ptr(a.ne).i32(a.edgeCap).ptr(tab.ptr).i32(size).
		ptr(saved).ptr(savedNbrs).ptr(a.indptr.ptr).ptr(nbrs.ptr)
	c.launch("exclude_write", d1(c.blocks(int64(a.dstCap), 256)), d1(256), 0)
}

// GroupRows groups the live positions by row (kernels/link.cu): counts
// (integer atomics), a scan into ptr, placement (any order within a row)
// and a sort of each row's positions, so the result is deterministic.
func (b *Backend) GroupRows(rows backend.Buffer, nEnds, nRows backend.Count, ptr, order backend.Buffer) {
	c := b.begin("GroupRows")
	defer c.end()
	ne := c.count("nEnds", nEnds)
	nr := c.count("nRows", nRows)
	rs := c.buf("rows", rows, backend.I32, nEnds.Cap)
	ps := c.buf("ptr", ptr, backend.I32, nRows.Cap+1)
	os := c.buf("order", order, backend.I32, nEnds.Cap)
	if !c.ok {
		return
	}
	ptrBytes := int64(nRows.Cap+1) * 4
	cnt := c.scratch(scratchLink, ptrBytes)
	if !c.ok {
		return
	}
	c.memset(cnt, 0, ptrBytes)
	grid := d1(c.blocks(int64(nEnds.Cap), 256))
	c.args().ptr(rs.ptr).ptr(ne).i32(nEnds.Cap).ptr(nr).i32(nRows.Cap).ptr(cnt).ptr(b.errDev)
	c.launch("group_count", grid, d1(256), 0)
	c.scan(cnt, ps.ptr, nr, nRows.Cap, 1, 0, 0, 0)
	c.memset(cnt, 0, ptrBytes) // each row's positions placed so far
	c.args().ptr(rs.ptr).ptr(ne).i32(nEnds.Cap).ptr(nr).i32(nRows.Cap).ptr(ps.ptr).ptr(cnt).ptr(os.ptr)
	c.launch("group_place", grid, d1(256), 0)
	c.args().ptr(ps.ptr).ptr(nr).i32(nRows.Cap).ptr(os.ptr)
	c.launch("group_sort", d1(c.blocks(int64(nRows.Cap), 256)), d1(256), 0)
}

// PairProduct writes the live pairs' elementwise products (pair_product,
// kernels/link.cu).
func (b *Backend) PairProduct(x backend.Buffer, dim int, n backend.Count, k int, rows, h backend.Buffer) {
	c := b.begin("PairProduct")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, 0)
	rs := c.buf("rows", rows, backend.I32, n.Cap*(2+k))
	hs := c.buf("h", h, backend.F32, n.Cap*(1+k)*dim)
	if !c.ok {
		return
	}
	c.args().ptr(xs.ptr).i32(dim).ptr(nP).i32(n.Cap).i32(k).ptr(rs.ptr).ptr(hs.ptr)
	c.launch("pair_product", d1(c.blocks(int64(n.Cap)*int64(1+k)*int64(dim), 256)), d1(256), 0)
}

// PairProductBackward gathers each live row's gradient in GroupRows's
// order (pair_product_bwd, kernels/link.cu): no atomics.
func (b *Backend) PairProductBackward(x, dh backend.Buffer, dim int, n backend.Count, k int, rows, ptr, order backend.Buffer, nRows backend.Count, dx backend.Buffer) {
	c := b.begin("PairProductBackward")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	nr := c.count("nRows", nRows)
	xs := c.buf("x", x, backend.F32, nRows.Cap*dim)
	ds := c.buf("dh", dh, backend.F32, n.Cap*(1+k)*dim)
	rs := c.buf("rows", rows, backend.I32, n.Cap*(2+k))
	ps := c.buf("ptr", ptr, backend.I32, nRows.Cap+1)
	os := c.buf("order", order, backend.I32, n.Cap*(2+k))
	out := c.buf("dx", dx, backend.F32, nRows.Cap*dim)
	if !c.ok {
		return
	}
	c.args().ptr(xs.ptr).ptr(ds.ptr).i32(dim).ptr(nP).i32(n.Cap).i32(k).ptr(rs.ptr).ptr(ps.ptr).ptr(os.ptr).
		ptr(nr).i32(nRows.Cap).ptr(out.ptr)
	c.launch("pair_product_bwd", d1(c.blocks(int64(nRows.Cap)*int64(dim), 256)), d1(256), 0)
}

// PairLoss is the binary cross-entropy of the live pairs' scores
// (pair_loss, kernels/link.cu): one block, a fixed order of sums.
func (b *Backend) PairLoss(scores backend.Buffer, n backend.Count, k int, loss, dscores backend.Buffer, correct backend.Count) {
	c := b.begin("PairLoss")
	defer c.end()
	nP := c.count("n", n)
	ss := c.buf("scores", scores, backend.F32, n.Cap*(1+k))
	ls := c.buf("loss", loss, backend.F32, 1)
	ds := c.buf("dscores", dscores, backend.F32, n.Cap*(1+k))
	cp := c.count("correct", correct)
	if !c.ok {
		return
	}
	c.args().ptr(ss.ptr).ptr(nP).i32(n.Cap).i32(k).ptr(ls.ptr).ptr(ds.ptr).ptr(cp)
	c.launch("pair_loss", d1(1), d1(256), 0)
}

var _ backend.Link = (*Backend)(nil)
