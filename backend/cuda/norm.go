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
	c.args().ptr(part).ptr(nP).i32(rowsCap).i32(chunkRows).i32(width).i32(half).flag(mean).ptr(out).ptr(out2).ptr(dout)
	c.launch("norm_fold", d1(uint32((width+31)/32)), dim3{32, normY, 1}, 0)
}

// colSums overwrites out (F32 [dim]) with the column sums of the live rows
// of a ([rowsCap, dim]).
func (c *call) colSums(a, nP uintptr, rowsCap, dim int, out uintptr) {
	chunkRows, chunks, part := c.normChunks(rowsCap, dim, dim, 0)
	g, t := normPartGrid(dim, chunks)
	c.args().ptr(a).ptr(nP).i32(rowsCap).i32(dim).i32(chunkRows).ptr(0).ptr(part)
	c.launch("norm_part", g, t, 0)
	c.normFold(part, nP, rowsCap, chunkRows, dim, dim, false, out, 0, 0)
}

// BatchNormStats overwrites stats with the column means and biased
// variances of the live rows of x: the means first, then the squared
// deviations from them (float64 means, as the CPU twin).
func (b *Backend) BatchNormStats(x backend.Buffer, n backend.Count, dim int, stats backend.Buffer) {
	c := b.begin("BatchNormStats")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, n.Cap*dim)
	st := c.buf("stats", stats, backend.F32, 2*dim)
	if !c.ok {
		return
	}
	chunkRows, chunks, part := c.normChunks(n.Cap, dim, dim, dim)
	mean := part + uintptr(chunks*dim*8)
	g, t := normPartGrid(dim, chunks)
	sa := st.addr()
	for pass, center := range []uintptr{0, mean} {
		c.args().ptr(xs.addr()).ptr(nP).i32(n.Cap).i32(dim).i32(chunkRows).ptr(center).ptr(part)
		c.launch("norm_part", g, t, 0)
		out, dout := sa, mean
		if pass == 1 {
			out, dout = sa+uintptr(4*dim), 0
		}
		c.normFold(part, nP, n.Cap, chunkRows, dim, dim, true, out, 0, dout)
	}
}

// normBwdSums overwrites dgamma and dbeta (F32 [dim] each) with Σ dy·x̂ and
// Σ dy over the live rows.
func (c *call) normBwdSums(xs, dys *buffer, nP uintptr, n backend.Count, dim int, perRow bool, ms, dgamma, dbeta uintptr) {
	chunkRows, chunks, part := c.normChunks(n.Cap, dim, 2*dim, 0)
	g, t := normPartGrid(dim, chunks)
	c.args().ptr(xs.addr()).ptr(dys.addr()).ptr(nP).i32(n.Cap).i32(dim).flag(perRow).ptr(ms).i32(chunkRows).ptr(part)
	c.launch("norm_bwd_part", g, t, 0)
	c.normFold(part, nP, n.Cap, chunkRows, 2*dim, dim, false, dgamma, dbeta, 0)
}

// normMS writes the (mean, reciprocal deviation) pairs NormApply and
// NormBackward read into scratch: per live row (perRow) or per column
// (from stats). It returns the scratch's address.
func (c *call) normMS(x *buffer, nP uintptr, n backend.Count, dim int, perRow bool, st *buffer, eps float32) uintptr {
	if !perRow {
		ms := c.scratch(scratchColsum, int64(2*dim)*4)
		c.args().ptr(st.addr()).i32(dim).f32(eps).ptr(ms)
		c.launch("norm_col_ms", d1(c.blocks(int64(dim), 256)), d1(256), 0)
		return ms
	}
	ms := c.scratch(scratchColsum, int64(2*max(n.Cap, 1))*4)
	c.args().ptr(x.addr()).ptr(nP).i32(n.Cap).i32(dim).f32(eps).ptr(ms)
	g, t := c.warpRows(n.Cap)
	c.launch("norm_row_ms", g, t, 0)
	return ms
}

// NormApply normalises the live rows of x into y.
func (b *Backend) NormApply(x backend.Buffer, n backend.Count, dim int, perRow bool, stats, gamma, beta backend.Buffer, eps float32, y backend.Buffer) {
	c := b.begin("NormApply")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, n.Cap*dim)
	var st *buffer
	if !perRow {
		st = c.buf("stats", stats, backend.F32, 2*dim)
	}
	g := c.buf("gamma", gamma, backend.F32, dim)
	be := c.buf("beta", beta, backend.F32, dim)
	ys := c.buf("y", y, backend.F32, n.Cap*dim)
	if !c.ok {
		return
	}
	ms := c.normMS(xs, nP, n, dim, perRow, st, eps)
	c.args().ptr(xs.addr()).ptr(nP).i32(n.Cap).i32(dim).flag(perRow).ptr(ms).ptr(g.addr()).ptr(be.addr()).ptr(ys.addr())
	c.launch("norm_apply", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// NormBackward overwrites dx, dgamma, dbeta (and dbias when set) with the
// gradients of NormApply's training pass.
func (b *Backend) NormBackward(x, dy backend.Buffer, n backend.Count, dim int, perRow bool, stats, gamma backend.Buffer, eps float32, dx, dgamma, dbeta, dbias backend.Buffer) {
	c := b.begin("NormBackward")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	xs := c.buf("x", x, backend.F32, n.Cap*dim)
	dys := c.buf("dy", dy, backend.F32, n.Cap*dim)
	var st *buffer
	if !perRow {
		st = c.buf("stats", stats, backend.F32, 2*dim)
	}
	g := c.buf("gamma", gamma, backend.F32, dim)
	dxs := c.buf("dx", dx, backend.F32, n.Cap*dim)
	dg := c.buf("dgamma", dgamma, backend.F32, dim)
	db := c.buf("dbeta", dbeta, backend.F32, dim)
	dbi := c.optBuf("dbias", dbias, backend.F32, dim)
	if !c.ok {
		return
	}
	ms := c.normMS(xs, nP, n, dim, perRow, st, eps)
	c.normBwdSums(xs, dys, nP, n, dim, perRow, ms, dg.addr(), db.addr())
	if perRow {
		c.args().ptr(xs.addr()).ptr(dys.addr()).ptr(nP).i32(n.Cap).i32(dim).ptr(ms).ptr(g.addr()).ptr(dxs.addr())
		wg, wt := c.warpRows(n.Cap)
		c.launch("norm_bwd_rows", wg, wt, 0)
	} else {
		c.args().ptr(xs.addr()).ptr(dys.addr()).ptr(nP).i32(n.Cap).i32(dim).ptr(ms).ptr(g.addr()).ptr(dg.addr()).
			ptr(db.addr()).ptr(0).ptr(dxs.addr())
		c.launch("norm_bwd_cols", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
	}
	if dbi != nil {
		c.colSums(dxs.addr(), nP, n.Cap, dim, dbi.addr())
	}
}

// NormRunning moves the running statistics towards the batch's.
func (b *Backend) NormRunning(stats backend.Buffer, n backend.Count, dim int, momentum float32, running, unless backend.Buffer) {
	c := b.begin("NormRunning")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	st := c.buf("stats", stats, backend.F32, 2*dim)
	run := c.buf("running", running, backend.F32, 2*dim)
	u := c.optBuf("unless", unless, backend.I32, 1)
	if !c.ok {
		return
	}
	c.args().ptr(st.addr()).ptr(nP).i32(n.Cap).i32(dim).f32(momentum).ptr(run.addr()).ptr(u.addr())
	c.launch("norm_running", d1(c.blocks(int64(dim), 256)), d1(256), 0)
}

// NormMoments overwrites moments with the moments of the live rows whose
// statistics are stats.
func (b *Backend) NormMoments(stats backend.Buffer, n backend.Count, dim int, moments backend.Buffer) {
	c := b.begin("NormMoments")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	st := c.buf("stats", stats, backend.F32, 2*dim)
	mo := c.buf("moments", moments, backend.F32, 2*dim+1)
	if !c.ok {
		return
	}
	c.args().ptr(st.addr()).ptr(nP).i32(n.Cap).i32(dim).ptr(mo.addr())
	c.launch("norm_moments", d1(c.blocks(int64(dim), 256)), d1(256), 0)
}

// NormFromMoments overwrites stats and count from a group's summed
// moments.
func (b *Backend) NormFromMoments(moments backend.Buffer, dim int, stats backend.Buffer, count backend.Count) {
	c := b.begin("NormFromMoments")
	defer c.end()
	c.dim("dim", dim)
	mo := c.buf("moments", moments, backend.F32, 2*dim+1)
	st := c.buf("stats", stats, backend.F32, 2*dim)
	cP := c.count("count", count)
	if !c.ok {
		return
	}
	c.args().ptr(mo.addr()).i32(dim).ptr(st.addr()).ptr(cP)
	c.launch("norm_from_moments", d1(c.blocks(int64(dim), 256)), d1(256), 0)
}

// NormBackwardSums overwrites sums with Σ dy·x̂, Σ dy over the live rows
// and their count.
func (b *Backend) NormBackwardSums(x, dy backend.Buffer, n backend.Count, dim int, stats backend.Buffer, eps float32, sums backend.Buffer) {
	c := b.begin("NormBackwardSums")
	defer c.end()
	nP, xs, dys, st := c.normGrad(x, dy, n, dim, stats)
	su := c.buf("sums", sums, backend.F32, 2*dim+1)
	if !c.ok {
		return
	}
	ms := c.normMS(xs, nP, n, dim, false, st, eps)
	c.normBwdSums(xs, dys, nP, n, dim, false, ms, su.addr(), su.addr()+uintptr(4*dim))
	c.args().ptr(nP).i32(n.Cap).ptr(su.addr() + uintptr(8*dim))
	c.launch("norm_put_count", d1(1), d1(32), 0)
}

// NormBackwardApply overwrites dx (and dbias) from a group's summed
// backward sums.
func (b *Backend) NormBackwardApply(x, dy backend.Buffer, n backend.Count, dim int, stats, gamma backend.Buffer, eps float32, sums, dx, dbias backend.Buffer) {
	c := b.begin("NormBackwardApply")
	defer c.end()
	nP, xs, dys, st := c.normGrad(x, dy, n, dim, stats)
	g := c.buf("gamma", gamma, backend.F32, dim)
	su := c.buf("sums", sums, backend.F32, 2*dim+1)
	dxs := c.buf("dx", dx, backend.F32, n.Cap*dim)
	dbi := c.optBuf("dbias", dbias, backend.F32, dim)
	if !c.ok {
		return
	}
	ms := c.normMS(xs, nP, n, dim, false, st, eps)
	sa := su.addr()
	c.args().ptr(xs.addr()).ptr(dys.addr()).ptr(nP).i32(n.Cap).i32(dim).ptr(ms).ptr(g.addr()).ptr(sa).
		ptr(sa + uintptr(4*dim)).ptr(sa + uintptr(8*dim)).ptr(dxs.addr())
	c.launch("norm_bwd_cols", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
	if dbi != nil {
		c.colSums(dxs.addr(), nP, n.Cap, dim, dbi.addr())
	}
}

// normGrad checks the arguments the synchronised backward ops share: the
// live rows of x and dy ([n.Cap, dim]) and column statistics.
func (c *call) normGrad(x, dy backend.Buffer, n backend.Count, dim int, stats backend.Buffer) (nP uintptr, xs, dys, st *buffer) {
	c.dim("dim", dim)
	nP = c.count("n", n)
	xs = c.buf("x", x, backend.F32, n.Cap*dim)
	dys = c.buf("dy", dy, backend.F32, n.Cap*dim)
	st = c.buf("stats", stats, backend.F32, 2*dim)
	return nP, xs, dys, st
}

var _ backend.Norm = (*Backend)(nil)
