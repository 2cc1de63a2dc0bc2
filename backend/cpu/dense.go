package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
	"github.com/fanout-gnn/fanout/rng"
)

// Gather copies rows: out[i, :] = table[ids[i], :] for i < n; table is
// [rows, dim] (F32, I32 or BF16), ids I32 [n.Cap], out [n.Cap, dim] of
// table's type, or F32 for a BF16 table (widened). An id outside [0,
// rows) is an error and nothing is written.
func (b *Backend) Gather(table backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c, ck := b.checkGather(table, dim, ids, n, out)
	defer c.end()
	if !c.ok {
		return
	}
	tb := ck.table
	b.gatherRows(&c, ck.ids[:ck.n], tb.Len()/dim, dim, rowRef{f32: ck.out.f32, i32: ck.out.i32, u16: ck.out.u16}, func(_ int, v int32) (rowRef, int) { return rowOf(tb, int(v), dim), 0 }, nil)
}

// widenRow writes bfloat16 bits src[:len(dst)] to dst as float32.
func widenRow(dst []float32, src []uint16) {
	for j := range dst {
		dst[j] = backend.BF16Float(src[j])
	}
}

// BiasActDropout: y = dropout(act(x + bias)) on rows [:n] of [n.Cap, dim]
// matrices. bias (F32 [dim]) may be nil. With p > 0 the element (row, col)
// is kept iff word col%4 of Philox(row, col/4, step, epoch<<8|stream) is at
// least rng.DropThreshold(p), and kept values are scaled by 1/(1-p); mask (U8
// [n.Cap, dim], 1 = kept) is written. With p = 0 mask is not used and may be
// nil. x and y may be the same buffer.
func (b *Backend) BiasActDropout(x backend.Buffer, n backend.Count, dim int, bias backend.Buffer, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	c, ck := b.checkBiasActDropout(x, n, dim, bias, relu, p, r, mask, y)
	defer c.end()
	if !c.ok {
		return
	}
	rows, xb, bs, yb, ms, key, keys := ck.n, ck.x, ck.bias, ck.y, ck.mask, ck.r, ck.rKeys
	thr := rng.DropThreshold(p)
	scale := 1 / (1 - p)
	b.rows(rows, max(1, 2048/dim), func(lo, hi int) {
		var tmp, wide []float32
		if yb.dt == backend.BF16 {
			tmp = make([]float32, dim)
		}
		if xb.dt == backend.BF16 {
			wide = make([]float32, dim)
		}
		for i := lo; i < hi; i++ {
			xr, yr := wide, tmp
			if wide == nil {
				xr = xb.f32[i*dim : (i+1)*dim]
			} else {
				widenRow(wide, xb.u16[i*dim:(i+1)*dim])
			}
			if tmp == nil {
				yr = yb.f32[i*dim : (i+1)*dim]
			}
			vec.BiasAct(xr, bs, relu, yr)
			dropRowOf(yr, i, relu, ms, keys, key, thr, scale)
			if tmp != nil {
				roundRow(yb.u16[i*dim:(i+1)*dim], tmp)
			}
		}
	})
}

// reluIf is max(v, 0) when relu, else v.
func reluIf(relu bool, v float32) float32 {
	if relu {
		return max(v, 0)
	}
	return v
}

// dropRowOf applies dropout to row i (yr, after its ReLU) of
// BiasActDropout's activation in place when there is a mask (ms, [rows,
// len(yr)]), keyed by keys[i] (or i without keys). NormApply ends its rows
// with it too.
func dropRowOf(yr []float32, i int, relu bool, ms []uint8, keys []int32, key rng.Key, thr uint32, scale float32) {
	if ms == nil {
		return
	}
	idx := uint32(i)
	if keys != nil {
		idx = uint32(keys[i])
	}
	dim := len(yr)
	dropRow(key, idx, thr, scale, relu, yr, ms[i*dim:(i+1)*dim])
}

// roundRow writes float32 src to dst as bfloat16 bits (nearest even).
func roundRow(dst []uint16, src []float32) {
	for j, v := range src {
		dst[j] = backend.BF16Bits(v)
	}
}

// dropChunk is the number of columns whose Philox words dropRow draws at
// once (a multiple of 32, so that chunks start on whole 8-slot groups).
const dropChunk = 1024

// dropRow applies the dropout mask of row i to y in place and records it,
// with the ReLU's gate when relu (mask 1 iff y > 0 then). Element j is kept
// iff word j%4 of Philox(i, j/4, ...) >= thr.
func dropRow(key rng.Key, i, thr uint32, scale float32, relu bool, y []float32, mask []uint8) {
	var words [dropChunk]uint32
	pk, c3 := key.PhiloxKey(), key.Epoch<<8|key.Stream
	for j0 := 0; j0 < len(y); j0 += dropChunk {
		n := min(dropChunk, len(y)-j0)
		w := words[:(n+3)/4*4]
		vec.PhiloxWords(pk, i, uint32(j0/4), key.Step, c3, w)
		vec.DropApply(w, thr, scale, relu, y[j0:j0+n], mask[j0:j0+n])
	}
}

// BiasActDropoutBackward: dx = dy·mask/(1-p) when p > 0 (the mask holds the
// ReLU's gate), else dy·[y > 0 if relu], on rows [:n]; dbias (F32 [dim], may
// be nil) = column sums of dx over rows [:n] (overwritten). mask is read
// only when p > 0, y only when relu and p = 0. dy and dx may be the same
// buffer.
func (b *Backend) BiasActDropoutBackward(dy, y backend.Buffer, n backend.Count, dim int, relu bool, p float32, mask, dx, dbias backend.Buffer) {
	c, ck := b.checkBiasActDropoutBackward(dy, y, n, dim, relu, p, mask, dx, dbias)
	defer c.end()
	if !c.ok {
		return
	}
	b.actBackward(ck.dy, ck.n, dim, relu, p, ck.y, ck.mask, ck.dx, ck.dbias)
}

// actBackward is BiasActDropoutBackward's work on checked operands: dys
// (the incoming gradient, may be dx's float32 storage) passed back
// through the ReLU and dropout into dxb, and dbs (may be nil) = the
// column sums of dx before rounding.
func (b *Backend) actBackward(dys []float32, rows, dim int, relu bool, p float32, yb *buffer, ms []uint8, dxb *buffer, dbs []float32) {
	dxs := dxb.f32
	if dxb.dt == backend.BF16 { // the float32 values first, rounded below
		dxs = make([]float32, rows*dim)
	}
	scale := 1 / (1 - p)
	b.rows(rows, max(1, 2048/dim), func(lo, hi int) {
		for i := lo * dim; i < hi*dim; i++ {
			// Branch-free (masks are random): keep is all ones or zero.
			keep := ^uint32(0)
			g := dys[i]
			if ms != nil {
				keep = -uint32(ms[i] & 1) // the ReLU's gate included
				g *= scale
			} else if relu && yb.dt == backend.BF16 {
				keep = vec.Positive(backend.BF16Float(yb.u16[i]))
			} else if relu {
				keep = vec.Positive(yb.f32[i])
			}
			dxs[i] = math.Float32frombits(math.Float32bits(g) & keep)
		}
	})
	if dbs != nil {
		b.columnSums(dxs, rows, dim, dbs)
	}
	if dxb.dt == backend.BF16 {
		roundRow(dxb.u16, dxs)
	}
}

// columnSums sets out[j] = Σ_{i < rows} m[i·dim + j], accumulated in
// float64: each block of sumRows rows in row order (threads split the
// blocks, each reading whole rows), then the blocks' sums in block order.
// The blocks do not depend on the thread count, so neither does the sum.
func (b *Backend) columnSums(m []float32, rows, dim int, out []float32) {
	blocks := max(1, (rows+sumRows-1)/sumRows)
	acc := b.scratch64(blocks * dim)
	b.rows(blocks, 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			a := acc[k*dim : (k+1)*dim]
			for i := k * sumRows; i < min(rows, (k+1)*sumRows); i++ {
				for j, v := range m[i*dim : (i+1)*dim] {
					a[j] += float64(v)
				}
			}
		}
	})
	b.cols(dim, 64, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			s := 0.0
			for k := range blocks {
				s += acc[k*dim+j]
			}
			out[j] = float32(s)
		}
	})
}

// sumRows is the rows of one block of columnSums.
const sumRows = 256

// Argmax writes the index of each row's largest logit (the first on ties)
// into out (I32 [n.Cap]) for rows [:n].
func (b *Backend) Argmax(logits backend.Buffer, n backend.Count, classes int, out backend.Buffer) {
	c, ck := b.checkArgmax(logits, n, classes, out)
	defer c.end()
	if !c.ok {
		return
	}
	ls, os := ck.logits, ck.out
	b.rows(ck.n, max(1, 2048/classes), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			os[i] = int32(argmax(ls[i*classes : (i+1)*classes]))
		}
	})
}

// argmax is the index of the largest value (the first on ties; NaNs are
// never chosen unless every value is NaN, then 0).
func argmax(row []float32) int {
	best := 0
	for j, v := range row {
		if v > row[best] || (row[best] != row[best] && v == v) {
			best = j
		}
	}
	return best
}

// AddCount adds delta to the int32 at c unless unless (an optional I32
// flag, element 0) is non-zero.
func (b *Backend) AddCount(cnt backend.Count, delta int32, unless backend.Buffer) {
	c, ck := b.checkAddCount(cnt, delta, unless)
	defer c.end()
	if c.ok && !ck.unless {
		*ck.cP += delta
	}
}
