package cuda

import "github.com/fanout-gnn/fanout/backend"

// Gather copies rows: out[i, :] = table[ids[i], :] for live rows i; table
// is [rows, dim] F32, I32 or BF16, ids I32 [n.Cap], out [n.Cap, dim] of
// table's type, or F32 for a BF16 table (widened). Rows move in the
// widest words their bytes and both buffers' alignment allow
// (gatherWords). An id outside the table is reported by Sync (its row is
// left unwritten).
func (b *Backend) Gather(table backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c, ck := b.checkGather(table, dim, ids, n, out)
	defer c.end()
	if !c.ok {
		return
	}
	tb, ob := ck.table, ck.out
	if tb.dt == backend.BF16 && ob.dt == backend.F32 {
		name, words := "gather_bf16x1", dim
		if dim%4 == 0 && tb.ptr%8 == 0 && ob.ptr%16 == 0 {
			name, words = "gather_bf16x4", dim/4
		}
		c.launchGatherRows(&ck, name, words, d1(c.blocks(int64(n.Cap)*int64(words), 256)), d1(256), 0)
		return
	}
	name, words := gatherWords(dim*tb.dt.Size(), tb.ptr, ob.ptr)
	c.launchGatherRows(&ck, name, words, d1(c.blocks(int64(n.Cap)*int64(words)/4+1, 256)), d1(256), 0)
}

// gatherWords picks the row copy's kernel and a row's words in it: the
// widest word (16, 8, 4 or 2 bytes) that divides the row's bytes and both
// addresses.
func gatherWords(rowBytes int, table, out uintptr) (string, int) {
	for _, w := range []struct {
		bytes int
		name  string
	}{{16, "gather_rows4"}, {8, "gather_rows2"}, {4, "gather_rows1"}} {
		b := uintptr(w.bytes)
		if rowBytes%w.bytes == 0 && table%b == 0 && out%b == 0 {
			return w.name, rowBytes / w.bytes
		}
	}
	return "gather_rows_h", rowBytes / 2
}

// actAlign is the alignment of an activation's four-element words.
func actAlign(half bool) uintptr {
	if half {
		return 8
	}
	return 16
}

// BiasActDropout: y = dropout(act(x + bias)) on live rows of [n.Cap, dim]
// matrices (see kernels/dense.cu). bias may be nil; with p = 0 mask is not
// used and may be nil. x and y may be the same buffer. Either may be BF16;
// x and y of different types must not overlap.
func (b *Backend) BiasActDropout(x backend.Buffer, n backend.Count, dim int, bias backend.Buffer, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	c, ck := b.checkBiasActDropout(x, n, dim, bias, relu, p, r, mask, y)
	defer c.end()
	if !c.ok {
		return
	}
	xs, bs, ys, ms := ck.x, ck.bias, ck.y, ck.mask
	half, halfX := ys.dt == backend.BF16, xs.dt == backend.BF16
	if halfX != half && xs.overlaps(ys) {
		c.failf("y overlaps x, of another type")
		return
	}
	vec := dim%4 == 0 && xs.ptr%actAlign(halfX) == 0 && ys.ptr%actAlign(half) == 0 && (ms == nil || ms.ptr%4 == 0) &&
		(bs == nil || bs.ptr%16 == 0)
	c.launchBiasActDropout(&ck, vec, half, halfX, d1(c.blocks(int64(n.Cap)*32, 256)), d1(256), 0) // a warp per row
}

// BiasActDropoutBackward: dx = dy·mask/(1-p) when p > 0 (the mask holds the
// ReLU's gate), else dy·[y > 0 if relu], on live rows; dbias (may be nil) =
// column sums of dx over live rows, deterministic (partial sums per chunk of
// rows, added in order). y is read only with relu and p = 0, mask only with
// p > 0. dy and dx may be the same buffer; a BF16 dx (rounded) must not
// overlap dy.
func (b *Backend) BiasActDropoutBackward(dy, y backend.Buffer, n backend.Count, dim int, relu bool, p float32, mask, dx, dbias backend.Buffer) {
	c, ck := b.checkBiasActDropoutBackward(dy, y, n, dim, relu, p, mask, dx, dbias)
	defer c.end()
	dys, ys, ms, dxs, dbs := ck.dy, ck.y, ck.mask, ck.dx, ck.dbias
	half := ys != nil && ys.dt == backend.BF16
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
	c.launchBiasActDropoutBwd(&ck, name, partial, chunkRows, half, halfDx, dim3{uint32(colBlocks), uint32(chunks), 1}, dim3{32, 8, 1}, 0)
	if dbs != nil {
		c.columnSums(chunkRows, dim, colsum{partial, ck.nP, n.Cap, dbs.addr()})
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

// colsum is one set of column sums: out (F32 [dim]) = the sums over the
// live chunks of rows (live count at nP, capacity capRows) of partial
// [chunks, dim], in a fixed order.
type colsum struct {
	partial, nP uintptr
	capRows     int
	out         uintptr
}

// columnSums launches column_sums for one set of sums, or two of the same
// chunks and width (one launch).
func (c *call) columnSums(chunkRows, dim int, a colsum, b ...colsum) {
	sets, second := uint32(1), colsum{}
	if len(b) > 0 {
		sets, second = 2, b[0]
	}
	c.launchColumnSums(a.partial, a.nP, a.capRows, chunkRows, dim, a.out, second.partial, second.nP, second.capRows, second.out,
		dim3{uint32((dim + 31) / 32), sets, 1}, dim3{32, colsumY, 1}, 0)
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
	c, ck := b.checkSoftmaxCrossEntropy(logits, labels, n, den, classes, loss, dlogits, correct)
	defer c.end()
	if !c.ok {
		return
	}
	dP, dCap := ck.nP, n.Cap
	if den.Buf != nil {
		dP, dCap = ck.denP, den.Cap
	}
	// The scratch: the ticket (zero between launches), then the blocks'
	// partial sums and hits.
	blocks := max(1, (n.Cap+lossWarps-1)/lossWarps)
	ticket := c.scratchZeroed(scratchLoss, 16+int64(blocks)*12)
	part := ticket + 16
	hits := part + uintptr(blocks)*8
	c.launchSoftmaxXent(&ck, dP, dCap, part, hits, ticket, d1(uint32(blocks)), d1(32*lossWarps), 0)
}

// Argmax writes the index of each live row's largest logit (the first on
// ties; NaNs lose unless all are NaN, then 0) into out (I32 [n.Cap]).
func (b *Backend) Argmax(logits backend.Buffer, n backend.Count, classes int, out backend.Buffer) {
	c, ck := b.checkArgmax(logits, n, classes, out)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchArgmaxRows(&ck, d1(c.blocks(int64(n.Cap), 8)), d1(256), 0)
}

// AddCount adds delta to the int32 at cnt, on the device, unless unless
// (optional I32 flag, element 0) is non-zero there. The launch is
// deferred: when the next op is an Adam call whose step is at cnt and
// whose Skip is unless (a step's optimizer advancing its counter), the
// Adam launch adds delta itself (takeCount), and when it is Accumulate,
// that launch does (a step's clock advanced with its accumulation); any
// other op launches add_count first.
func (b *Backend) AddCount(cnt backend.Count, delta int32, unless backend.Buffer) {
	c, ck := b.checkAddCount(cnt, delta, unless)
	defer c.end()
	if !c.ok {
		return
	}
	b.countQ = countQueue{p: ck.cP, unless: ck.unless.addr(), delta: delta, set: true}
}
