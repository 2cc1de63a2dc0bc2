package gemm

// packBBlock packs op(B)[pc:pc+kb, jc:jc+nb] into c.packB as nr-column
// panels: panel q holds columns jc+q·nr.. at offset q·kb·nr, element
// [p·nr + j], zero-padded past nb. Panels are packed in parallel.
func (c *Context) packBBlock(transB bool, b []float32, ldb, pc, kb, jc, nb int) {
	panels := (nb + nr - 1) / nr
	parts := min(c.threads, panels)
	per := (panels + parts - 1) / parts
	c.run(parts, func(part int) {
		for q := part * per; q < min(panels, (part+1)*per); q++ {
			dst := c.packB[q*kb*nr : (q+1)*kb*nr]
			j0 := jc + q*nr
			w := min(nr, jc+nb-j0)
			packBPanel(dst, transB, b, ldb, pc, kb, j0, w)
		}
	})
}

// packAlong packs kb rows of width elements, row p from s[(pc+p)·ld+j0:]
// (w live, zero past w), into dst[p·width:]: a panel whose rows lie along
// the rows of s (B stored k×n, or op(A) from A stored k×m).
func packAlong(dst, s []float32, ld, pc, kb, j0, w, width int) {
	// Whole rows of the two panel widths are copied as arrays: a copy
	// call per 6 or 32 floats cost more than the copy (6 are moved one by
	// one, as an array of 6 is copied by a call too).
	switch {
	case w == mr && width == mr:
		for p := range kb {
			o := (pc+p)*ld + j0
			d, v := (*[mr]float32)(dst[p*mr:]), (*[mr]float32)(s[o:o+mr])
			d[0], d[1], d[2], d[3], d[4], d[5] = v[0], v[1], v[2], v[3], v[4], v[5]
		}
		return
	case w == nr && width == nr:
		for p := range kb {
			o := (pc+p)*ld + j0
			*(*[nr]float32)(dst[p*nr:]) = *(*[nr]float32)(s[o : o+nr])
		}
		return
	}
	for p := range kb {
		src := s[(pc+p)*ld+j0 : (pc+p)*ld+j0+w]
		row := dst[p*width : p*width+width]
		copy(row, src)
		clear(row[w:])
	}
}

// packAcross packs the same panel from s stored the other way round, the
// panel's column j being s[(j0+j)·ld+pc:][:kb] (B stored n×k, or op(A) from
// A stored m×k): element [p·width + j], zero for j past w.
func packAcross(dst, s []float32, ld, pc, kb, j0, w, width int) {
	for j := range width {
		if j >= w {
			for p := range kb {
				dst[p*width+j] = 0
			}
			continue
		}
		src := s[(j0+j)*ld+pc : (j0+j)*ld+pc+kb]
		for p, v := range src {
			dst[p*width+j] = v
		}
	}
}

// packBPanel packs nr columns of op(B) from j0 (w live), rows pc:pc+kb.
func packBPanel(dst []float32, transB bool, b []float32, ldb, pc, kb, j0, w int) {
	if transB {
		packAcross(dst, b, ldb, pc, kb, j0, w, nr)
	} else {
		packAlong(dst, b, ldb, pc, kb, j0, w, nr)
	}
}

// packABlock packs op(A)[i0:i0+mb, pc:pc+kb] into dst as mr-row panels:
// panel r at offset r·kb·mr, element [p·mr + i], zero-padded past mb.
func packABlock(dst []float32, transA bool, a []float32, lda, i0, mb, pc, kb int) {
	for r := 0; r*mr < mb; r++ {
		panel := dst[r*kb*mr : (r+1)*kb*mr]
		h := min(mr, mb-r*mr)
		if transA {
			packAlong(panel, a, lda, pc, kb, i0+r*mr, h, mr)
		} else {
			packAcross(panel, a, lda, pc, kb, i0+r*mr, h, mr)
		}
	}
}

// multiplyBlock computes C[:, jc:jc+nb] (+)= alpha·op(A)[:, pc:pc+kb]·packB.
// Tasks are (row block, column group) pairs; each of c.threads parts takes
// every threads-th task and packs its A block into its own buffer.
func (c *Context) multiplyBlock(transA bool, a []float32, lda, m, pc, kb, jc, nb int,
	alpha, beta float32, cm []float32, ldc int) {
	mcEff := min(mc, roundUp((m+c.threads-1)/c.threads, mr))
	rowBlocks := (m + mcEff - 1) / mcEff
	panels := (nb + nr - 1) / nr
	groups := min(panels, max(1, c.threads/rowBlocks))
	perGroup := (panels + groups - 1) / groups
	tasks := rowBlocks * groups
	parts := min(c.threads, tasks)
	c.run(parts, func(part int) {
		for t := part; t < tasks; t += parts {
			rb, g := t/groups, t%groups
			i0 := rb * mcEff
			q0, q1 := g*perGroup, min(panels, (g+1)*perGroup)
			if q0 >= q1 {
				continue
			}
			blk := newABlock(c.packA[part], transA, a, lda, i0, min(mcEff, m-i0), pc, kb)
			j0 := jc + q0*nr
			c.macroKernel(blk, c.packB[q0*kb*nr:q1*kb*nr], j0, min(jc+nb, jc+q1*nr)-j0, alpha, beta, cm, ldc)
		}
	})
}

// aBlock is the block op(A)[i0:i0+mb, pc:pc+kb] as the micro-kernels read
// it: packed row panels, or (direct) full panels in place in a with only
// the last partial panel packed at the start of packed.
type aBlock struct {
	a           []float32
	lda, i0, mb int
	pc, kb      int
	packed      []float32
	direct      bool
}

// newABlock packs op(A)[i0:i0+mb, pc:pc+kb] into buf, or, when A is not
// transposed and the assembly kernels run, only its last partial panel.
func newABlock(buf []float32, transA bool, a []float32, lda, i0, mb, pc, kb int) aBlock {
	blk := aBlock{a: a, lda: lda, i0: i0, mb: mb, pc: pc, kb: kb, packed: buf, direct: !transA && hasDirect()}
	if !blk.direct {
		packABlock(buf, transA, a, lda, i0, mb, pc, kb)
	} else if full := mb / mr * mr; full < mb {
		packABlock(buf, false, a, lda, i0+full, mb-full, pc, kb)
	}
	return blk
}

// macroKernel runs the micro-kernel over the row panels of blk and the
// packed B panels bPanels, which hold columns [j0, j0+w0) of op(B); it
// writes C rows blk.i0.. and those columns.
func (c *Context) macroKernel(blk aBlock, bPanels []float32, j0, w0 int, alpha, beta float32, cm []float32, ldc int) {
	var tmp [mr * nr]float32
	kb := blk.kb
	for q := 0; q*nr < w0; q++ {
		bp := bPanels[q*kb*nr : (q+1)*kb*nr]
		jq := j0 + q*nr
		w := min(nr, w0-q*nr)
		for r := 0; r*mr < blk.mb; r++ {
			h := min(mr, blk.mb-r*mr)
			ci := (blk.i0+r*mr)*ldc + jq
			full := h == mr && w == nr
			out, ld, al, be := cm[ci:], ldc, alpha, beta
			if !full {
				out, ld, al, be = tmp[:], nr, 1, 0
			}
			if blk.direct && h == mr {
				kernelDirect(kb, blk.a[(blk.i0+r*mr)*blk.lda+blk.pc:], blk.lda, bp, out, ld, al, be)
			} else {
				off := r * kb * mr
				if blk.direct {
					off = 0
				}
				kernel(kb, blk.packed[off:off+kb*mr], bp, out, ld, al, be)
			}
			if !full {
				addTile(cm[ci:], ldc, tmp[:], h, w, alpha, beta)
			}
		}
	}
}

// addTile sets c[i·ldc+j] = alpha·t[i·nr+j] + beta·c[i·ldc+j] for i < h,
// j < w (c not read when beta is 0).
func addTile(c []float32, ldc int, t []float32, h, w int, alpha, beta float32) {
	for i := range h {
		row := c[i*ldc : i*ldc+w]
		ti := t[i*nr : i*nr+w]
		for j := range row {
			if beta == 0 {
				row[j] = alpha * ti[j]
			} else {
				row[j] = float32(alpha*ti[j]) + float32(beta*row[j])
			}
		}
	}
}

// kernelGo is the portable micro-kernel: with acc = Σ_p a[p·mr+i]·b[p·nr+j]
// over p < k, it sets c[i·ldc+j] = alpha·acc + beta·c[i·ldc+j] for the full
// mr×nr tile (c not read when beta is 0).
func kernelGo(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	var acc [mr * nr]float32
	a = a[:k*mr]
	b = b[:k*nr]
	for p := range k {
		bp := (*[nr]float32)(b[p*nr : p*nr+nr])
		ap := (*[mr]float32)(a[p*mr : p*mr+mr])
		for i := range mr {
			ai := ap[i]
			row := (*[nr]float32)(acc[i*nr : i*nr+nr])
			for j := range nr {
				row[j] += ai * bp[j]
			}
		}
	}
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		for j := range row {
			if beta == 0 {
				row[j] = alpha * acc[i*nr+j]
			} else {
				row[j] = float32(alpha*acc[i*nr+j]) + float32(beta*row[j])
			}
		}
	}
}

// kernelGoDirect is kernelGo with A read in place: A(i, p) = a[i·lda+p].
func kernelGoDirect(k int, a []float32, lda int, b, c []float32, ldc int, alpha, beta float32) {
	var packed [mr * kc]float32
	for p := range k {
		for i := range mr {
			packed[p*mr+i] = a[i*lda+p]
		}
	}
	kernelGo(k, packed[:k*mr], b, c, ldc, alpha, beta)
}
