package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// The graph attention ops (backend.Attention; the CUDA twin is
// kernels/gat.cu). Work is split by destination rows, and scatters into
// sources go through the block's source-grouped edge lists (transpose), so
// every sum is added in one order for any thread count. A bipartite block
// (Block.Bipartite) has no self loop: position 0 of every destination is
// invalid, as an edge whose source is not live is.

// HeadDot writes out[i, h] = Σ_f x[i, h·dim+f]·a[h·dim+f] for rows [:n],
// summed in float64 (x F32 [n.Cap, heads·dim], out F32 [n.Cap, heads]).
func (b *Backend) HeadDot(x backend.Buffer, n backend.Count, heads, dim int, a, out backend.Buffer) {
	c, ck := b.checkHeadDot(x, n, heads, dim, a, out)
	defer c.end()
	if c.ok {
		b.headDot(ck.x, ck.n, heads, dim, ck.a, ck.out)
	}
}

// HeadDots is HeadDot with a1 over rows [:n1] and with a2 over rows [:n2]
// of the same x.
func (b *Backend) HeadDots(x backend.Buffer, n1, n2 backend.Count, heads, dim int, a1, a2, out1, out2 backend.Buffer) {
	c, ck := b.checkHeadDots(x, n1, n2, heads, dim, a1, a2, out1, out2)
	defer c.end()
	if c.ok {
		b.headDot(ck.x, ck.n1, heads, dim, ck.a1, ck.out1)
		b.headDot(ck.x, ck.n2, heads, dim, ck.a2, ck.out2)
	}
}

// headDot is HeadDot over rows [:rows] of the checked views.
func (b *Backend) headDot(xs []float32, rows, heads, dim int, as, os []float32) {
	w := heads * dim
	b.rows(rows, max(1, 2048/w), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xr := xs[i*w : (i+1)*w]
			for h := range heads {
				var s float64
				for f := h * dim; f < (h+1)*dim; f++ {
					s += float64(xr[f]) * float64(as[f])
				}
				os[i*heads+h] = float32(s)
			}
		}
	})
}

// HeadDotBackward accumulates dx[i, h·dim+f] += dout1[i, h]·a1[h·dim+f]
// on rows [:n1], then dout2[i, h]·a2[h·dim+f] on rows [:n2], and
// overwrites da1 and da2 with the column sums of dout·x, accumulated in
// float64 in row order (threads split the columns). Without add, dx's rows
// [:max(n1, n2)] are zeroed first.
func (b *Backend) HeadDotBackward(x, dout1, dout2 backend.Buffer, n1, n2 backend.Count, heads, dim int, a1, a2, dx backend.Buffer, add bool, da1, da2 backend.Buffer) {
	c, ck := b.checkHeadDotBackward(x, dout1, dout2, n1, n2, heads, dim, a1, a2, dx, add, da1, da2)
	defer c.end()
	if !c.ok {
		return
	}
	if !add {
		clear(ck.dx[:max(ck.n1, ck.n2)*heads*dim])
	}
	b.headDotBackward(ck.x, ck.dout1, ck.n1, heads, dim, ck.a1, ck.dx, ck.da1)
	b.headDotBackward(ck.x, ck.dout2, ck.n2, heads, dim, ck.a2, ck.dx, ck.da2)
}

// headDotBackward is one score vector's part of HeadDotBackward, over its
// rows [:rows].
func (b *Backend) headDotBackward(xs, ds []float32, rows, heads, dim int, as, dxs, das []float32) {
	w := heads * dim
	b.rows(rows, max(1, 2048/w), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for h := range heads {
				g := ds[i*heads+h]
				row := dxs[i*w+h*dim : i*w+(h+1)*dim]
				for f, av := range as[h*dim : (h+1)*dim] {
					row[f] += g * av
				}
			}
		}
	})
	acc := b.scratch64(w)
	b.cols(w, 16, func(lo, hi int) {
		for i := range rows {
			xr, dr := xs[i*w:(i+1)*w], ds[i*heads:(i+1)*heads]
			for col := lo; col < hi; col++ {
				acc[col] += float64(dr[col/dim]) * float64(xr[col])
			}
		}
		for col := lo; col < hi; col++ {
			das[col] = float32(acc[col])
		}
	})
}

// attView is a validated block with its attention scores: the positions of
// destination i are its self loop (k = 0, source i; none where bip) and its
// edges e0..e1-1 (k = 1 + e - e0, source Indices[e]).
type attView struct {
	v        blockView
	bip      bool
	dstCap   int
	heads    int
	slope    float32
	el, er   []float32 // [srcCap, heads], [dstCap, heads]
	keys     []int32   // dropout index per destination, or nil (the row)
	key      rng.Key
	thr      uint32
	scale    float32
	dropping bool
}

// attention is the view EdgeSoftmax and its backward share of their
// checked arguments.
func attention(blk *backend.Block, v blockView, el, er []float32, heads int, slope, p float32, key rng.Key, keys []int32) attView {
	a := attView{v: v, bip: blk.Bipartite, dstCap: blk.NumDst.Cap, heads: heads, slope: slope, el: el, er: er}
	if p > 0 {
		a.keys, a.key = keys, key
		a.thr, a.scale, a.dropping = rng.DropThreshold(p), 1/(1-p), true
	}
	return a
}

// row is coef's row of position k of destination i whose edges start at e0.
func (a *attView) row(i, e0, k int) int {
	if k == 0 {
		return i
	}
	return a.dstCap + e0 + k - 1
}

// src is the source of position k of destination i (e0: its first edge),
// and whether it is valid.
func (a *attView) src(i, e0, k int) (int, bool) {
	if k == 0 {
		return i, !a.bip
	}
	j := int(a.v.indices[e0+k-1])
	return j, j >= 0 && j < a.v.nSrc
}

// softmax writes destination i's coefficients for every head before
// dropout into alpha ([positions, heads], 0 for invalid edges) and returns
// the positions; ex is scratch. The CUDA kernels compute the same in the
// same precision: LeakyReLU in float32, exponentials and sums in float64.
func (a *attView) softmax(i int, alpha []float32, ex []float64) int {
	e0, e1 := a.v.edges(i)
	np := 1 + e1 - e0
	H := a.heads
	for h := range H {
		m := float32(math.Inf(-1))
		for k := range np {
			ex[k] = math.NaN() // invalid
			if j, ok := a.src(i, e0, k); ok {
				s := leaky(a.el[j*H+h]+a.er[i*H+h], a.slope)
				ex[k] = float64(s)
				m = max(m, s)
			}
		}
		var sum float64
		for k := range np {
			if !math.IsNaN(ex[k]) {
				ex[k] = math.Exp(ex[k] - float64(m))
				sum += ex[k]
			}
		}
		for k := range np {
			alpha[k*H+h] = 0
			if !math.IsNaN(ex[k]) {
				alpha[k*H+h] = float32(ex[k] / sum)
			}
		}
	}
	return np
}

// leaky is LeakyReLU with negative slope s.
func leaky(t, s float32) float32 {
	if t > 0 {
		return t
	}
	return s * t
}

// dropper draws the attention dropout of one destination: element q = k·heads
// + h is kept iff word q%4 of Philox(index, q/4) >= thr. Words are drawn
// four at a time, in increasing q.
type dropper struct {
	a    *attView
	idx  uint32
	slot uint32
	w    [4]uint32
	have bool
}

func (a *attView) dropper(i int) dropper {
	idx := uint32(i)
	if a.keys != nil {
		idx = uint32(a.keys[i])
	}
	return dropper{a: a, idx: idx}
}

func (d *dropper) keep(q int) bool {
	if s := uint32(q / 4); !d.have || s != d.slot {
		d.w, d.slot, d.have = d.a.key.Words(d.idx, s), s, true
	}
	return d.w[q%4] >= d.a.thr
}

// rowScratch grows per-worker scratch for rows of np positions.
func rowScratch(alpha []float32, ex []float64, np, heads int) ([]float32, []float64) {
	if cap(alpha) < np*heads {
		alpha = make([]float32, np*heads)
	}
	if cap(ex) < np {
		ex = make([]float64, np)
	}
	return alpha[:np*heads], ex[:np]
}

// maxPositions is the largest number of positions of a live destination.
func (a *attView) maxPositions() int {
	m := 1
	for i := range a.v.nDst {
		e0, e1 := a.v.edges(i)
		m = max(m, 1+e1-e0)
	}
	return m
}

// EdgeSoftmax writes GAT's attention coefficients (see backend.Attention):
// a softmax over each destination's self loop and valid edges per head,
// then attention dropout.
func (b *Backend) EdgeSoftmax(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, coef backend.Buffer) {
	c, ck := b.checkEdgeSoftmax(blk, el, er, heads, slope, p, r, coef)
	defer c.end()
	if !c.ok {
		return
	}
	a := attention(blk, ck.blk, ck.el, ck.er, heads, slope, p, ck.r, ck.rKeys)
	cs := ck.coef
	np := a.maxPositions()
	b.rows(a.v.nDst, 64, func(lo, hi int) {
		alpha, ex := rowScratch(nil, nil, np, heads)
		for i := lo; i < hi; i++ {
			e0, _ := a.v.edges(i)
			n := a.softmax(i, alpha, ex)
			d := a.dropper(i)
			for k := range n {
				row := cs[a.row(i, e0, k)*heads : (a.row(i, e0, k)+1)*heads]
				for h := range heads {
					v := alpha[k*heads+h]
					if a.dropping {
						v *= a.scale
						if !d.keep(k*heads + h) {
							v = 0
						}
					}
					row[h] = v
				}
			}
		}
	})
}

// coefLen is the length of a coefficient buffer for blk.
func coefLen(blk *backend.Block, heads int) int {
	return (blk.NumDst.Cap + blk.NumEdges.Cap) * heads
}

// EdgeSoftmaxBackward recomputes the coefficients and the dropout mask as
// EdgeSoftmax did, and overwrites der (live destinations) and del (rows
// [0, NumSrc)) with the gradients of the scores (see backend.Attention).
// The gradient of each position's logit is kept in float64 scratch; del
// adds them per source in destination order (the self loop of destination
// j among them at j's place; none in a bipartite block).
func (b *Backend) EdgeSoftmaxBackward(blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, dcoef, del, der backend.Buffer) {
	c, ck := b.checkEdgeSoftmaxBackward(blk, el, er, heads, slope, p, r, dcoef, del, der)
	defer c.end()
	if !c.ok {
		return
	}
	a := attention(blk, ck.blk, ck.el, ck.er, heads, slope, p, ck.r, ck.rKeys)
	dc, dels, ders := ck.dcoef, ck.del, ck.der
	ts := b.scratch64(coefLen(blk, heads))
	np := a.maxPositions()
	b.rows(a.v.nDst, 64, func(lo, hi int) {
		alpha, ex := rowScratch(nil, nil, np, heads)
		g := make([]float64, np*heads)
		for i := lo; i < hi; i++ {
			a.logitGrads(i, dc, alpha, ex, g, ts, ders[i*heads:(i+1)*heads])
		}
	})
	t := b.transpose(&a.v)
	b.rows(a.v.nSrc, 64, func(lo, hi int) {
		acc := make([]float64, heads)
		add := func(row int) {
			for h, v := range ts[row*heads : (row+1)*heads] {
				acc[h] += v
			}
		}
		for j := lo; j < hi; j++ {
			clear(acc)
			k, end := t.start[j], t.start[j+1]
			if !a.bip && j < a.v.nDst {
				first, _ := a.v.edges(j)
				for ; k < end && int(t.edge[k]) < first; k++ {
					add(a.dstCap + int(t.edge[k]))
				}
				add(j)
			}
			for ; k < end; k++ {
				add(a.dstCap + int(t.edge[k]))
			}
			for h, v := range acc {
				dels[j*heads+h] = float32(v)
			}
		}
	})
}

// logitGrads is EdgeSoftmaxBackward for destination i: it writes the
// gradient of every position's logit (el + er) into ts (coef's layout) and
// their sums per head into der; alpha, ex and g are scratch.
func (a *attView) logitGrads(i int, dc []float32, alpha []float32, ex, g, ts []float64, der []float32) {
	H := a.heads
	e0, _ := a.v.edges(i)
	n := a.softmax(i, alpha, ex)
	d := a.dropper(i)
	for k := range n {
		row := a.row(i, e0, k)
		for h := range H {
			q := k*H + h
			v := dc[row*H+h]
			if a.dropping {
				v *= a.scale
				if !d.keep(q) {
					v = 0
				}
			}
			g[q] = float64(v)
		}
	}
	for h := range H {
		var s float64
		for k := range n {
			s += float64(alpha[k*H+h]) * g[k*H+h]
		}
		var sum float64
		for k := range n {
			row := a.row(i, e0, k)
			t := 0.0
			if j, ok := a.src(i, e0, k); ok {
				t = float64(alpha[k*H+h]) * (g[k*H+h] - s)
				if !(a.el[j*H+h]+a.er[i*H+h] > 0) {
					t *= float64(a.slope)
				}
			}
			ts[row*H+h] = t
			sum += t
		}
		der[h] = float32(sum)
	}
}
