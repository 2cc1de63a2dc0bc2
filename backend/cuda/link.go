package cuda

import "github.com/fanout-gnn/fanout/backend"

// EdgeSeeds writes a step's ends and draws the negatives (edge_seeds,
// kernels/link.cu), and a step's shared negatives in one block whose
// first thread draws them with a set of the drawn in shared memory
// (edge_shared). An edge id outside pairs is reported by Sync.
func (b *Backend) EdgeSeeds(pairs, ids backend.Buffer, n backend.Count, k, layout, nodes int, dist backend.Buffer, r backend.Rand, ends backend.Buffer, nEnds, nPairs backend.Count) {
	c, ck := b.checkEdgeSeeds(pairs, ids, n, k, layout, nodes, dist, r, ends, nEnds, nPairs)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchEdgeSeeds(&ck, d1(c.blocks(int64(n.Cap)*int64(1+k), 256)), d1(256), 0)
	if layout == backend.NegShared && k > 0 {
		slots := 16
		for slots < 2*k {
			slots *= 2
		}
		c.launchEdgeShared(&ck, slots, d1(1), d1(256), slots*4)
	}
}

// GroupRows groups the live positions by row (kernels/link.cu): counts
// (integer atomics), a scan into ptr, placement (any order within a row)
// and a sort of each row's positions, so the result is deterministic.
func (b *Backend) GroupRows(rows backend.Buffer, nEnds, nRows backend.Count, ptr, order backend.Buffer) {
	c, ck := b.checkGroupRows(rows, nEnds, nRows, ptr, order)
	defer c.end()
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
	c.launchGroupCount(&ck, cnt, grid, d1(256), 0)
	c.scan(cnt, ck.ptr.ptr, ck.nRowsP, nRows.Cap, 1, 0, 0, 0)
	c.memset(cnt, 0, ptrBytes) // each row's positions placed so far
	c.launchGroupPlace(&ck, cnt, grid, d1(256), 0)
	c.launchGroupSort(&ck, d1(c.blocks(int64(nRows.Cap), 256)), d1(256), 0)
}

// PairProduct writes the live pairs' elementwise products (pair_product,
// kernels/link.cu).
func (b *Backend) PairProduct(x backend.Buffer, dim int, n backend.Count, k, layout int, rows, h backend.Buffer) {
	c, ck := b.checkPairProduct(x, dim, n, k, layout, rows, h)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchPairProduct(&ck, d1(c.blocks(int64(n.Cap)*int64(1+k)*int64(dim), 256)), d1(256), 0)
}

// PairProductBackward gathers each live row's gradient in GroupRows's
// order (pair_product_bwd, kernels/link.cu): no atomics.
func (b *Backend) PairProductBackward(x, dh backend.Buffer, dim int, n backend.Count, k, layout int, rows, ptr, order backend.Buffer, nRows backend.Count, dx backend.Buffer) {
	c, ck := b.checkPairProductBackward(x, dh, dim, n, k, layout, rows, ptr, order, nRows, dx)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchPairProductBwd(&ck, d1(c.blocks(int64(nRows.Cap)*int64(dim), 256)), d1(256), 0)
}

// PairLoss is the binary cross-entropy of the live pairs' scores
// (pair_loss, kernels/link.cu): one block, a fixed order of sums.
func (b *Backend) PairLoss(scores backend.Buffer, n backend.Count, k int, loss, dscores backend.Buffer, correct backend.Count) {
	c, ck := b.checkPairLoss(scores, n, k, loss, dscores, correct)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchPairLoss(&ck, d1(1), d1(256), 0)
}

// PairRanks ranks each live positive among its own negatives (pair_ranks,
// kernels/link.cu): a warp per positive.
func (b *Backend) PairRanks(scores backend.Buffer, n backend.Count, k int, ranks backend.Buffer) {
	c, ck := b.checkPairRanks(scores, n, k, ranks)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchPairRanks(&ck, d1(c.blocks(int64(n.Cap)*32, 256)), d1(256), 0)
}

// LevelCounts adds up where the live negatives' scores fall among the
// levels (level_counts, kernels/link.cu): a binary search per score and
// integer atomics, so the counts are the same every run.
func (b *Backend) LevelCounts(levels backend.Buffer, m int, scores backend.Buffer, n backend.Count, k int, counts backend.Buffer) {
	c, ck := b.checkLevelCounts(levels, m, scores, n, k, counts)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchLevelCounts(&ck, d1(c.blocks(int64(n.Cap)*int64(k), 256)), d1(256), 0)
}

var _ backend.Link = (*Backend)(nil)
