package gemm

// fewRunBytes bounds the packed blocks of op(A) and op(B) that one run of
// sgemmFewRows holds (several k blocks, so that its two phases synchronise
// once per run, not once per block).
const fewRunBytes = 8 << 20

// fewRunBlocks is the most k blocks of one run.
const fewRunBlocks = 16

// sgemmFewRows is Sgemm for m <= fewRows and n <= nc (the weight gradient:
// m×n small, k large). Where the columns make at most fewOwnGroups groups
// for the threads, each part packs all of op(A) itself and runs through k
// without synchronising (fewRowsOwn); with more, that packing would be
// repeated once a group, so the parts pack each block once and share it
// (fewRowsShared). Both accumulate every element of C over the k blocks in
// increasing order, as Sgemm's other path does, for any thread count.
func (c *Context) sgemmFewRows(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, cm []float32, ldc int) {
	if min(c.threads, (n+nr-1)/nr) <= fewOwnGroups {
		c.fewRowsOwn(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc)
		return
	}
	c.fewRowsShared(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc)
}

// fewOwnGroups is the most column groups for which fewRowsOwn's repeated
// packing of op(A) costs less than fewRowsShared's synchronisation (on a
// 16-core host: 145 against 117 GFLOP/s at 2 threads, 291 against 371 at
// 16, for products-sim's bottom weight gradient).
const fewOwnGroups = 2

// fewRowsOwn: each part owns a contiguous range of column panels, packs all
// of op(A) and its own panels of op(B) for each k block, and runs through k
// with no synchronisation between parts.
func (c *Context) fewRowsOwn(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, cm []float32, ldc int) {
	c.ensureA()
	panels := (n + nr - 1) / nr
	parts := min(c.threads, panels)
	per := (panels + parts - 1) / parts
	for t := range parts {
		if len(c.ownB[t]) < kc*per*nr {
			c.ownB[t] = make([]float32, kc*per*nr)
		}
	}
	c.run(parts, func(part int) {
		q0, q1 := part*per, min(panels, (part+1)*per)
		if q0 >= q1 {
			return
		}
		own := c.ownB[part]
		j0 := q0 * nr
		w := min(n, q1*nr) - j0
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for q := q0; q < q1; q++ {
				dst := own[(q-q0)*kb*nr : (q-q0+1)*kb*nr]
				packBPanel(dst, transB, b, ldb, pc, kb, q*nr, min(nr, n-q*nr))
			}
			blk := newABlock(c.packA[part], transA, a, lda, 0, m, pc, kb)
			c.macroKernel(blk, own[:(q1-q0)*kb*nr], j0, w, alpha, bet, cm, ldc)
		}
	})
}

// fewRowsShared takes k in runs of up to fewRunBlocks blocks of kc. For
// each run the parts first pack op(A) and op(B) of its blocks once, a
// block a part at a time, into shared buffers; then each part takes (row
// block, column group) tiles of C and runs through the blocks in order.
func (c *Context) fewRowsShared(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, cm []float32, ldc int) {
	mp, np := roundUp(m, mr), roundUp(n, nr)
	per := max(1, min(fewRunBlocks, fewRunBytes/(4*kc*(mp+np))))
	if need := per * kc * mp; len(c.fewA) < need {
		c.fewA = make([]float32, need)
	}
	if need := per * kc * np; len(c.fewB) < need {
		c.fewB = make([]float32, need)
	}
	tiles := fewTiles(c.threads, mp/mr, np/nr)
	blocks := (k + kc - 1) / kc
	for b0 := 0; b0 < blocks; b0 += per {
		b1 := min(blocks, b0+per)
		c.run(min(c.threads, b1-b0), func(part int) {
			for s := b0 + part; s < b1; s += c.threads {
				pc := s * kc
				kb := min(kc, k-pc)
				i := s - b0
				packABlock(c.fewA[i*kc*mp:], transA, a, lda, 0, m, pc, kb)
				for q := 0; q*nr < n; q++ {
					packBPanel(c.fewB[i*kc*np+q*kb*nr:], transB, b, ldb, pc, kb, q*nr, min(nr, n-q*nr))
				}
			}
		})
		c.run(len(tiles), func(part int) {
			t := tiles[part]
			i0, mb := t.r0*mr, min(m, t.r1*mr)-t.r0*mr
			j0, w := t.q0*nr, min(n, t.q1*nr)-t.q0*nr
			for s := b0; s < b1; s++ {
				pc := s * kc
				kb := min(kc, k-pc)
				bet := beta
				if s > 0 {
					bet = 1
				}
				i := s - b0
				blk := aBlock{a: a, lda: lda, i0: i0, mb: mb, pc: pc, kb: kb, packed: c.fewA[i*kc*mp+t.r0*kb*mr:]}
				c.macroKernel(blk, c.fewB[i*kc*np+t.q0*kb*nr:i*kc*np+t.q1*kb*nr], j0, w, alpha, bet, cm, ldc)
			}
		})
	}
}

// fewTile is a tile of C: row panels [r0, r1) and column panels [q0, q1).
type fewTile struct{ r0, r1, q0, q1 int }

// fewTiles splits rowPanels × colPanels into at most threads tiles:
// column groups first (each tile then reads fewer B panels), then row
// blocks while threads remain.
func fewTiles(threads, rowPanels, colPanels int) []fewTile {
	groups := min(threads, colPanels)
	rowBlocks := min(rowPanels, max(1, threads/groups))
	var tiles []fewTile
	for rb := range rowBlocks {
		r0, r1 := rb*rowPanels/rowBlocks, (rb+1)*rowPanels/rowBlocks
		for g := range groups {
			tiles = append(tiles, fewTile{r0, r1, g * colPanels / groups, (g + 1) * colPanels / groups})
		}
	}
	return tiles
}
