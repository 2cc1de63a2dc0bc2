package cuda

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// Gather copies rows: out[i, :] = table[ids[i], :] for live rows i; table
// is [rows, dim] F32 or I32, ids I32 [n.Cap], out [n.Cap, dim] of table's
// type. Rows move as 16-byte words when dim % 4 == 0 and both buffers are
// 16-byte aligned. An id outside the table is reported by Sync (its row is
// left unwritten).
func (b *Backend) Gather(table backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("Gather")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	idx := c.buf("ids", ids, backend.I32, n.Cap)
	if !c.ok {
		return
	}
	dt := backend.F32
	if x, ok := table.(*buffer); ok && x != nil && (x.dt == backend.I32 || x.dt == backend.BF16) {
		dt = x.dt
	}
	tb := c.buf("table", table, dt, 0)
	if dt == backend.BF16 {
		ob := c.buf("out", out, backend.F32, n.Cap*dim)
		if !c.ok {
			return
		}
		name, words := "gather_bf16x1", dim
		if dim%4 == 0 && tb.ptr%8 == 0 && ob.ptr%16 == 0 {
			name, words = "gather_bf16x4", dim/4
		}
		c.args().ptr(tb.addr()).i64(int64(tb.n / dim)).i32(words).ptr(idx.addr()).ptr(nP).i32(n.Cap).ptr(ob.addr()).ptr(b.errDev)
		c.launch(name, d1(c.blocks(int64(n.Cap)*int64(words), 256)), d1(256), 0)
		return
	}
	ob := c.buf("out", out, dt, n.Cap*dim)
	if !c.ok {
		return
	}
	rows := int64(tb.n / dim)
	name, words := "gather_rows1", dim
	if dim%4 == 0 && tb.ptr%16 == 0 && ob.ptr%16 == 0 {
		name, words = "gather_rows4", dim/4
	}
	c.args().ptr(tb.addr()).i64(rows).i32(words).ptr(idx.addr()).ptr(nP).i32(n.Cap).ptr(ob.addr()).ptr(b.errDev)
	c.launch(name, d1(c.blocks(int64(n.Cap)*int64(words)/4+1, 256)), d1(256), 0)
}

// actAlign is the alignment of an activation's four-element words.
func actAlign(half bool) uintptr {
	if half {
		return 8
	}
	return 16
}

// dropoutArgs checks p (0 <= p < 1, as the CPU backend) and returns the
// keep threshold and scale 1/(1-p) computed in float32.
func (c *call) dropoutArgs(p float32) (thr uint32, scale float32) {
	if c.ok && !(p >= 0 && p < 1) {
		c.failf("dropout probability %g, want 0 <= p < 1", p)
	}
	return rng.DropThreshold(p), 1 / (1 - p)
}

// BiasActDropout: y = dropout(act(x + bias)) on live rows of [n.Cap, dim]
// matrices (see kernels/dense.cu). bias may be nil; with p = 0 mask is not
// used and may be nil. x and y may be the same buffer. Either may be BF16;
// x and y of different types must not overlap.
func (b *Backend) BiasActDropout(x backend.Buffer, n backend.Count, dim int, bias backend.Buffer, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	c := b.begin("BiasActDropout")
	defer c.end()
	c.dim("dim", dim)
	thr, scale := c.dropoutArgs(p)
	nP := c.count("n", n)
	xs := c.f32or16("x", x, n.Cap*dim)
	bs := c.optBuf("bias", bias, backend.F32, dim)
	ys := c.f32or16("y", y, n.Cap*dim)
	var ms, ks *buffer
	var clock uintptr
	var k0, k1 uint32
	dropout := p > 0
	if dropout {
		ms = c.buf("mask", mask, backend.U8, n.Cap*dim)
		clock, k0, k1 = c.clock(r)
		ks = c.optBuf("r.Keys", r.Keys, backend.I32, n.Cap)
	}
	if !c.ok {
		return
	}
	half, halfX := ys.dt == backend.BF16, xs.dt == backend.BF16
	if halfX != half && xs.overlaps(ys) {
		c.failf("y overlaps x, of another type")
		return
	}
	vec := dim%4 == 0 && xs.ptr%actAlign(halfX) == 0 && ys.ptr%actAlign(half) == 0 && (ms == nil || ms.ptr%4 == 0) &&
		(bs == nil || bs.ptr%16 == 0)
	c.args().ptr(xs.addr()).ptr(nP).i32(n.Cap).i32(dim).ptr(bs.addr()).flag(relu).flag(dropout).u32(thr).f32(scale).
		u32(k0).u32(k1).ptr(clock).u32(r.Stream).ptr(ks.addr()).ptr(ms.addr()).ptr(ys.addr()).flag(vec).flag(half).flag(halfX)
	c.launch("bias_act_dropout", d1(c.blocks(int64(n.Cap)*32, 256)), d1(256), 0) // a warp per row
}

// BiasActDropoutBackward: dx = dy·mask/(1-p) when p > 0 (the mask holds the
// ReLU's gate), else dy·[y > 0 if relu], on live rows; dbias (may be nil) =
// column sums of dx over live rows, deterministic (partial sums per chunk of
// rows, added in order). y is read only with relu and p = 0, mask only with
// p > 0. dy and dx may be the same buffer; a BF16 dx (rounded) must not
// overlap dy.
func (b *Backend) BiasActDropoutBackward(dy, y backend.Buffer, n backend.Count, dim int, relu bool, p float32, mask, dx, dbias backend.Buffer) {
	c := b.begin("BiasActDropoutBackward")
	defer c.end()
	c.dim("dim", dim)
	_, scale := c.dropoutArgs(p)
	nP := c.count("n", n)
	dys := c.buf("dy", dy, backend.F32, n.Cap*dim)
	var ys, ms *buffer
	if relu && p == 0 {
		ys = c.f32or16("y", y, n.Cap*dim)
	}
	half := ys != nil && ys.dt == backend.BF16
	if p > 0 {
		ms = c.buf("mask", mask, backend.U8, n.Cap*dim)
	}
	dxs := c.f32or16("dx", dx, n.Cap*dim)
	dbs := c.optBuf("dbias", dbias, backend.F32, dim)
	halfDx := dxs != nil && dxs.dt == backend.BF16
	if c.ok && halfDx && dys.overlaps(dxs) {
		c.failf("dx: a bfloat16 dx must not overlap dy")
	}
	if !c.ok {
		return
	}
	vec := dim%4 == 0 && dys.ptr%16 == 0 && dxs.ptr%actAlign(halfDx) == 0 && (ys == nil || ys.ptr%actAlign(half) == 0) && (ms == nil || ms.ptr%4 == 0)
	name, colBlocks := "bias_act_dropout_bwd", (dim+31)/32
	if vec {
		name, colBlocks = "bias_act_dropout_bwd4", (dim+127)/128
	}
	chunkRows, chunks := c.colsumChunks(n.Cap, colBlocks, 64, 8) // chunks of at least 64 rows
	var partial uintptr
	if dbs != nil {
		partial = c.scratch(scratchColsum, int64(chunks)*int64(dim)*4)
	}
	c.args().ptr(dys.addr()).ptr(ys.addr()).ptr(nP).i32(n.Cap).i32(dim).flag(relu).flag(p > 0).f32(scale).
		ptr(ms.addr()).ptr(dxs.addr()).ptr(partial).i32(chunkRows).flag(half).flag(halfDx)
	c.launch(name, dim3{uint32(colBlocks), uint32(chunks), 1}, dim3{32, 8, 1}, 0)
	if dbs != nil {
		c.columnSums(partial, nP, n.Cap, chunkRows, dim, dbs.addr())
	}
}

// colsumChunks picks the chunks of rows whose partial column sums a
// backward kernel writes (column_sums adds them): at least minRows rows (a
// multiple of the rows one block takes at a time), doubled, up to 1024,
// while a grid of colBlocks column blocks by the chunks would exceed perSM
// blocks per multiprocessor (fewer partials to add). With
// Options.Deterministic the chunks (and so the order of the sums) depend on
// the capacity only past 65535 chunks.
func (c *call) colsumChunks(rowsCap, colBlocks, minRows, perSM int) (chunkRows, chunks int) {
	chunkRows = minRows
	for (rowsCap+chunkRows-1)/chunkRows > 65535 || !c.b.opt.Deterministic && ((rowsCap+chunkRows-1)/chunkRows)*colBlocks > perSM*c.b.dev.sms && chunkRows < 1024 {
		chunkRows *= 2
	}
	return chunkRows, max(1, (rowsCap+chunkRows-1)/chunkRows)
}

// colsumY is COLSUM_Y of kernels/dense.cu: the threads of column_sums
// that share a column.
const colsumY = 32

// columnSums launches column_sums: out (F32 [dim]) = the sums over the live
// chunks of rows (live count at nP, capacity capRows) of partial [chunks,
// dim], in a fixed order.
func (c *call) columnSums(partial, nP uintptr, capRows, chunkRows, dim int, out uintptr) {
	c.args().ptr(partial).ptr(nP).i32(capRows).i32(chunkRows).i32(dim).ptr(out)
	c.launch("column_sums", d1(uint32((dim+31)/32)), dim3{32, colsumY, 1}, 0)
}

// lossWarps is LOSS_WARPS of kernels/loss.cu: rows per block.
const lossWarps = 8

// SoftmaxCrossEntropy over live rows of logits [n.Cap, classes] with I32
// labels: loss (F32 [1]) = the rows' summed loss over max(den, 1) (den: n
// when den.Buf is nil; float64 inside, like the CPU backend), dlogits = its
// gradient, the int32 at correct = rows whose argmax equals the label. Rows
// with a negative label add nothing but still divide; a label >= classes is
// reported by Sync. Deterministic.
func (b *Backend) SoftmaxCrossEntropy(logits, labels backend.Buffer, n, den backend.Count, classes int, loss, dlogits backend.Buffer, correct backend.Count) {
	c := b.begin("SoftmaxCrossEntropy")
	defer c.end()
	c.dim("classes", classes)
	nP := c.count("n", n)
	dP, dCap := nP, n.Cap
	if den.Buf != nil {
		dP, dCap = c.count("den", den), den.Cap
	}
	ls := c.buf("logits", logits, backend.F32, n.Cap*classes)
	ys := c.buf("labels", labels, backend.I32, n.Cap)
	lo := c.buf("loss", loss, backend.F32, 1)
	dl := c.buf("dlogits", dlogits, backend.F32, n.Cap*classes)
	cp := c.count("correct", correct)
	if !c.ok {
		return
	}
	// The scratch: the ticket (zero between launches), then the blocks'
	// partial sums and hits.
	blocks := max(1, (n.Cap+lossWarps-1)/lossWarps)
	ticket := c.scratchZeroed(scratchLoss, 16+int64(blocks)*12)
	part := ticket + 16
	hits := part + uintptr(blocks)*8
	c.args().ptr(ls.addr()).ptr(ys.addr()).ptr(nP).i32(n.Cap).ptr(dP).i32(dCap).i32(classes).ptr(dl.addr()).ptr(part).ptr(hits).ptr(b.errDev).
		ptr(ticket).ptr(lo.addr()).ptr(cp)
	c.launch("softmax_xent", d1(uint32(blocks)), d1(32*lossWarps), 0)
}

// Argmax writes the index of each live row's largest logit (the first on
// ties; NaNs lose unless all are NaN, then 0) into out (I32 [n.Cap]).
func (b *Backend) Argmax(logits backend.Buffer, n backend.Count, classes int, out backend.Buffer) {
	c := b.begin("Argmax")
	defer c.end()
	c.dim("classes", classes)
	nP := c.count("n", n)
	ls := c.buf("logits", logits, backend.F32, n.Cap*classes)
	os := c.buf("out", out, backend.I32, n.Cap)
	if !c.ok {
		return
	}
	c.args().ptr(ls.addr()).ptr(nP).i32(n.Cap).i32(classes).ptr(os.addr())
	c.launch("argmax_rows", d1(c.blocks(int64(n.Cap), 8)), d1(256), 0)
}

// AddCount adds delta to the int32 at cnt, on the device, unless unless
// (optional I32 flag, element 0) is non-zero there. The launch is
// deferred: when the next op is an Adam call whose step is at cnt and
// whose Skip is unless (a step's optimizer advancing its counter), the
// Adam launch adds delta itself (takeCount), and when it is Accumulate,
// that launch does (a step's clock advanced with its accumulation); any
// other op launches add_count first.
func (b *Backend) AddCount(cnt backend.Count, delta int32, unless backend.Buffer) {
	c := b.begin("AddCount")
	defer c.end()
	p := c.count("c", cnt)
	u := c.optBuf("unless", unless, backend.I32, 1)
	if !c.ok {
		return
	}
	b.countQ = countQueue{p: p, unless: u.addr(), delta: delta, set: true}
}
