package cuda

import "math/bits"

// The deterministic aggregation backward (Options.Deterministic; kernels in
// kernels/aggregate_det.cu). It groups the live edges by source with a
// stable least-significant-digit radix sort of edge ids, then gathers: one
// warp per source row adds its self term and its edges' contributions in
// edge order and adds the sum to dx. No float atomics, so the result is
// bitwise the same for any run, grid or capacity (with the same live data).
// Launches: a memset, det_keys, a scan of the per-source counts, then per
// digit det_hist, a scan and det_scatter, then det_gather; 5 + 3·digits in
// all (digits = ceil(bits(NumSrc.Cap) / 10), 2 for up to 2^20 sources).
// The sort (sortBySource) serves the deterministic attention backwards too
// (gat.go), each with its own gather.

// Sizes matching kernels/aggregate_det.cu.
const (
	detTile    = 256 * 16 // DET_TILE: items per radix block
	detMaxBits = 10       // DET_MAX_BITS: widest digit
)

// detLayout is the scratch of one call, in int32s from the slot's start;
// every region starts at a multiple of 4 (16 bytes).
type detLayout struct {
	keysA, keysB, valsA, valsB, edgeDst, srcPtr, hist int64
	total                                             int64 // int32s in all
	passes, width, tiles                              int
}

func detPlan(edgeCap, srcCap int) detLayout {
	var l detLayout
	keyBits := bits.Len(uint(srcCap)) // keys are in [0, srcCap], srcCap the sentinel
	if keyBits > 0 {
		l.passes = (keyBits + detMaxBits - 1) / detMaxBits
		l.width = (keyBits + l.passes - 1) / l.passes
	}
	l.tiles = max(1, (edgeCap+detTile-1)/detTile)
	round := func(n int64) int64 { return (n + 3) &^ 3 }
	var off int64
	for _, r := range []struct {
		p *int64
		n int64
	}{{&l.keysA, int64(edgeCap)}, {&l.keysB, int64(edgeCap)}, {&l.valsA, int64(edgeCap)}, {&l.valsB, int64(edgeCap)},
		{&l.edgeDst, int64(edgeCap)}, {&l.srcPtr, int64(srcCap) + 1}, {&l.hist, int64(l.tiles) << l.width}} {
		*r.p = off
		off += round(r.n)
	}
	l.total = off
	return l
}

// detSorted is a block's live edges grouped by source, in scratch: the
// edges of source j are perm[srcPtr[j]:srcPtr[j+1]] in edge order, and
// edgeDst[e] is edge e's destination.
type detSorted struct {
	srcPtr, perm, edgeDst uintptr
}

// sortBySource groups a's live edges by source with the stable radix sort
// described above (scratch slot scratchDetAgg). Each non-zero address of
// into receives that part of the result instead of the scratch (srcPtr
// [srcCap+1], perm and edgeDst [edgeCap] int32s). ok is false when there is
// nothing to sort (no source rows) or on failure.
func (c *call) sortBySource(a blockArgs, into detSorted) (s detSorted, ok bool) {
	l := detPlan(a.edgeCap, a.srcCap)
	if l.passes == 0 {
		return s, false // no source rows: nothing to add to
	}
	base := c.scratch(scratchDetAgg, l.total*4)
	if !c.ok {
		return s, false
	}
	at := func(off int64) uintptr { return base + uintptr(off)*4 }
	keys, vals, keysNext, valsNext := at(l.keysA), uintptr(0), at(l.keysB), at(l.valsB)
	edgeDst, srcPtr, hist := at(l.edgeDst), at(l.srcPtr), at(l.hist)
	if into.edgeDst != 0 {
		edgeDst = into.edgeDst
	}
	if into.srcPtr != 0 {
		srcPtr = into.srcPtr
	}

	c.memset(srcPtr, 0, (int64(a.srcCap)+1)*4)
	c.launchDetKeys(a.indptr.addr(), a.indices.addr(), a.nd, a.dstCap, a.ne, a.edgeCap, a.ns, a.srcCap, keys, edgeDst, srcPtr,
		d1(c.blocks(int64(a.edgeCap), 256)), d1(256), 0)
	c.scan(srcPtr, srcPtr, 0, a.srcCap+1, 0, 0, 0, 0)

	histLen := l.tiles << l.width
	for p := range l.passes {
		last := p == l.passes-1
		out := keysNext
		if last {
			out = 0 // the keys of the final order are not needed
			if into.perm != 0 {
				valsNext = into.perm
			}
		}
		c.launchDetHist(keys, a.ne, a.edgeCap, p*l.width, l.width, l.tiles, hist, d1(uint32(l.tiles)), d1(256), 0)
		c.scan(hist, hist, 0, histLen, 0, 0, 0, 0)
		c.launchDetScatter(keys, vals, a.ne, a.edgeCap, p*l.width, l.width, l.tiles, hist, out, valsNext, d1(uint32(l.tiles)), d1(256), 0)
		// The next pass reads what this one wrote and writes the other pair.
		keys, keysNext = keysNext, keys
		if vals == 0 {
			vals, valsNext = valsNext, at(l.valsA)
		} else {
			vals, valsNext = valsNext, vals
		}
	}
	return detSorted{srcPtr: srcPtr, perm: vals, edgeDst: edgeDst}, c.ok
}

// aggregateBackwardDet is AggregateBackward through the sort-and-gather
// path above.
func (c *call) aggregateBackwardDet(ck *aggregateBackwardArgs) {
	s, ok := c.sortBySource(ck.blk, detSorted{})
	if !ok {
		return
	}
	name, vecs := rowWords("det_gather", ck.dim, ck.dout, ck.dx)
	g, t := c.warpRows(ck.blk.srcCap)
	c.launchDetGather(ck, name, s.srcPtr, s.perm, s.edgeDst, vecs, g, t, 0)
}
