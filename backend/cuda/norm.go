package cuda

import "github.com/fanout-gnn/fanout/backend"

// The normalisation ops (backend.Norm), kernels/norm.cu. Column sums run
// over chunks of rows as well as columns: a grid of ceil(dim/32) column
// blocks of (32, normY) threads by the row chunks (colsumChunks: at least
// normChunkRows rows, and with Options.Deterministic a number of rows that
// depends on the capacity only past 65535 chunks) writes one float64
// partial per (chunk, column) to scratch, and norm_fold adds a column's
// partials in a fixed order.

const normY = 16 // NORM_Y in kernels/norm.cu

// normChunkRows is the fewest rows of a chunk of a column sum: 8 of each
// thread's rows, and float64 partials of 1/64 of the bytes of the rows.
const normChunkRows = 128

// normChunks returns the rows of a chunk and the chunks of a column sum
// over rowsCap rows of dim columns, and scratch (slot scratchNorm) of
// width float64 partials per chunk and extra float64 after them.
func (c *call) normChunks(rowsCap, dim, width, extra int) (chunkRows, chunks int, part uintptr) {
	chunkRows, chunks = c.colsumChunks(rowsCap, (dim+31)/32, normChunkRows, 8)
	part = c.scratch(scratchNorm, (int64(chunks)*int64(width)+int64(extra))*8)
	return chunkRows, chunks, part
}

// normPartGrid is the launch shape of norm_part and norm_bwd_part.
func normPartGrid(dim, chunks int) (dim3, dim3) {
	return dim3{uint32((dim + 31) / 32), uint32(chunks), 1}, dim3{32, normY, 1}
}

// normFold launches norm_fold: the live chunks' partials (part [chunks,
// width]) of each of width columns added in a fixed order, divided by the
// live count when mean, to out (columns below half), out2 (the others) and,
// when dout is set, as float64 to dout.
func (c *call) normFold(part, nP uintptr, rowsCap, chunkRows, width, half int, mean bool, out, out2, dout uintptr) {
	c.launchNormFold(part, nP, rowsCap, chunkRows, width, half, mean, out, out2, dout, d1(uint32((width+31)/32)), dim3{32, normY, 1}, 0)
}

// colSums overwrites out (F32 [dim]) with the column sums of the live rows
// of a ([rowsCap, dim]).
func (c *call) colSums(a, nP uintptr, rowsCap, dim int, out uintptr) {
	chunkRows, chunks, part := c.normChunks(rowsCap, dim, dim, 0)
	g, t := normPartGrid(dim, chunks)
	c.launchNormPart(a, nP, rowsCap, dim, chunkRows, part, g, t, 0)
	c.normFold(part, nP, rowsCap, chunkRows, dim, dim, false, out, 0, 0)
}

// BatchNormStats overwrites stats with the column means and biased
// variances of the live rows of x (plus bias, written to pre), from one
// pass over x (shifted float64 sums of the values and their squares, as
// the CPU twin).
func (b *Backend) BatchNormStats(x backend.Buffer, n backend.Count, dim int, bias, pre, stats backend.Buffer) {
	c, ck := b.checkBatchNormStats(x, n, dim, bias, pre, stats)
	defer c.end()
	if !c.ok {
		return
	}
	nP, xs, rows := ck.nP, ck.x.addr(), ck.x.addr()
	if ck.bias != nil {
		rows = ck.pre.addr() // the fold reads the first row with its bias
	}
	chunkRows, chunks, part := c.normChunks(n.Cap, dim, 2*dim, 0)
	g, t := normPartGrid(dim, chunks)
	c.launchNormMomentsPart(xs, ck.bias.addr(), ck.pre.addr(), nP, n.Cap, dim, chunkRows, part, g, t, 0)
	c.launchNormMomentsFold(rows, part, nP, n.Cap, chunkRows, dim, ck.stats.addr(), d1(uint32((dim+31)/32)), dim3{32, normY, 1}, 0)
}

// normActArgs is the activation norm_bwd_part passes dy back through
// (kernels/norm.cu's NORM_ACT); the zero value is none.
type normActArgs struct {
	y, mask       uintptr
	relu, dropout bool
	scale         float32
}

// normBwdSums overwrites dgamma and dbeta (F32 [dim] each) with Σ dy·x̂ and
// Σ dy over the live rows, dy passed back through act.
func (c *call) normBwdSums(xs, dys *buffer, nP uintptr, n backend.Count, dim int, perRow bool, ms uintptr, act normActArgs, dgamma, dbeta uintptr) {
	chunkRows, chunks, part := c.normChunks(n.Cap, dim, 2*dim, 0)
	g, t := normPartGrid(dim, chunks)
	c.launchNormBwdPart(xs.addr(), dys.addr(), nP, n.Cap, dim, perRow, ms, act.y, act.mask, act.relu, act.dropout, act.scale, chunkRows, part, g, t, 0)
	c.normFold(part, nP, n.Cap, chunkRows, 2*dim, dim, false, dgamma, dbeta, 0)
}

// normMS writes the (mean, reciprocal deviation) pairs NormApply and
// NormBackward read into scratch: per live row (perRow) or per column
// (from stats). It returns the scratch's address.
func (c *call) normMS(x *buffer, nP uintptr, n backend.Count, dim int, perRow bool, st *buffer, eps float32) uintptr {
	if !perRow {
		ms := c.scratch(scratchColsum, int64(2*dim)*4)
		c.launchNormColMs(st.addr(), dim, eps, ms, d1(c.blocks(int64(dim), 256)), d1(256), 0)
		return ms
	}
	ms := c.scratch(scratchColsum, int64(2*max(n.Cap, 1))*4)
	g, t := c.warpRows(n.Cap)
	c.launchNormRowMs(x.addr(), nP, n.Cap, dim, eps, ms, g, t, 0)
	return ms
}

// NormApply normalises the live rows of x into y.
func (b *Backend) NormApply(x backend.Buffer, n backend.Count, dim int, perRow bool, stats, gamma, beta backend.Buffer, eps float32, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	c, ck := b.checkNormApply(x, n, dim, perRow, stats, gamma, beta, eps, relu, p, r, mask, y)
	defer c.end()
	if !c.ok {
		return
	}
	ms := c.normMS(ck.x, ck.nP, n, dim, perRow, ck.stats, eps)
	vec := dim%4 == 0 && ck.x.ptr%16 == 0 && ck.y.ptr%16 == 0 && ck.gamma.ptr%16 == 0 && ck.beta.ptr%16 == 0 &&
		(ck.mask == nil || ck.mask.ptr%4 == 0)
	c.launchNormApply(&ck, ms, vec, d1(c.blocks(int64(n.Cap)*32, 256)), d1(256), 0) // a warp per row
}

// NormBackward overwrites dx, dgamma, dbeta (and dbias when set) with the
// gradients of NormApply's training pass; its two passes over the rows read
// dy through act.
func (b *Backend) NormBackward(x, dy backend.Buffer, n backend.Count, dim int, perRow bool, stats, gamma backend.Buffer, eps float32, act backend.ActGrad, dx, dgamma, dbeta, dbias backend.Buffer) {
	c, ck := b.checkNormBackward(x, dy, n, dim, perRow, stats, gamma, eps, act, dx, dgamma, dbeta, dbias)
	defer c.end()
	if !c.ok {
		return
	}
	nP, xs := ck.nP, ck.x
	ms := c.normMS(xs, nP, n, dim, perRow, ck.stats, eps)
	na := normActArgs{y: ck.actY.addr(), mask: ck.actMask.addr(), relu: act.Relu, dropout: act.P > 0, scale: 1 / (1 - act.P)}
	c.normBwdSums(xs, ck.dy, nP, n, dim, perRow, ms, na, ck.dgamma.addr(), ck.dbeta.addr())
	if perRow {
		wg, wt := c.warpRows(n.Cap)
		c.launchNormBwdRows(&ck, ms, wg, wt, 0)
	} else {
		c.launchNormBwdCols(&ck, ms, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
	}
	switch {
	case ck.dbias == nil:
	case perRow:
		c.colSums(ck.dx.addr(), nP, n.Cap, dim, ck.dbias.addr())
	default:
		c.memset(ck.dbias.addr(), 0, int64(4*dim)) // a column's mean absorbs a bias added before batch normalisation
	}
}

// NormRunning moves the running statistics towards the batch's (its means
// plus bias, when set).
func (b *Backend) NormRunning(stats, bias backend.Buffer, n backend.Count, dim int, momentum float32, running, unless backend.Buffer) {
	c, ck := b.checkNormRunning(stats, bias, n, dim, momentum, running, unless)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchNormRunning(&ck, d1(c.blocks(int64(dim), 256)), d1(256), 0)
}

// NormMoments overwrites moments with the moments of the live rows whose
// statistics are stats.
func (b *Backend) NormMoments(stats backend.Buffer, n backend.Count, dim int, moments backend.Buffer) {
	c, ck := b.checkNormMoments(stats, n, dim, moments)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchNormMoments(&ck, d1(c.blocks(int64(dim), 256)), d1(256), 0)
}

// NormFromMoments overwrites stats and count from a group's summed
// moments.
func (b *Backend) NormFromMoments(moments backend.Buffer, dim int, stats backend.Buffer, count backend.Count) {
	c, ck := b.checkNormFromMoments(moments, dim, stats, count)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchNormFromMoments(&ck, d1(c.blocks(int64(dim), 256)), d1(256), 0)
}

// NormBackwardSums overwrites sums with Σ dy·x̂, Σ dy over the live rows
// and their count.
func (b *Backend) NormBackwardSums(x, dy backend.Buffer, n backend.Count, dim int, stats backend.Buffer, eps float32, sums backend.Buffer) {
	c, ck := b.checkNormBackwardSums(x, dy, n, dim, stats, eps, sums)
	defer c.end()
	if !c.ok {
		return
	}
	nP, xs, su := ck.nP, ck.x, ck.sums.addr()
	ms := c.normMS(xs, nP, n, dim, false, ck.stats, eps)
	c.normBwdSums(xs, ck.dy, nP, n, dim, false, ms, normActArgs{scale: 1}, su, su+uintptr(4*dim))
	c.launchNormPutCount(&ck, su+uintptr(8*dim), d1(1), d1(32), 0)
}

// NormBackwardApply overwrites dx (and dbias) from a group's summed
// backward sums.
func (b *Backend) NormBackwardApply(x, dy backend.Buffer, n backend.Count, dim int, stats, gamma backend.Buffer, eps float32, sums, dx, dbias backend.Buffer) {
	c, ck := b.checkNormBackwardApply(x, dy, n, dim, stats, gamma, eps, sums, dx, dbias)
	defer c.end()
	if !c.ok {
		return
	}
	ms := c.normMS(ck.x, ck.nP, n, dim, false, ck.stats, eps)
	sa := ck.sums.addr()
	c.launchNormBwdColsSums(&ck, ms, sa, sa+uintptr(4*dim), sa+uintptr(8*dim), d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
	if ck.dbias != nil {
		c.colSums(ck.dx.addr(), ck.nP, n.Cap, dim, ck.dbias.addr())
	}
}

var _ backend.Norm = (*Backend)(nil)
