package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// The graph attention ops against float64 references. Blocks carry a few
// edges whose source lies outside the live sources (they must be skipped),
// and one destination has no edges (only its self loop). Bipartite blocks
// (a typed graph's relation: no self loop) have more destinations than
// sources; their self-loop rows must come out 0 and add nothing.

// attDegrees pins the degrees of the first destinations of an attention
// block around the CUDA backend's shapes: one edge, and 31, 32 and 40
// (the positions, self loop included, on either side of a warp), after
// randomBlock's destination 1 without edges.
var attDegrees = map[int]int{0: 40, 2: 31, 3: 32, 4: 1}

// attBlock is randomBlock with the degrees of attDegrees (where it has
// those destinations) and some edges' sources made invalid.
func (e *env) attBlock(nDst, nSrc int) hostBlock {
	h := e.withDegrees(e.randomBlock(nDst, nSrc), attDegrees)
	for k := range h.nEdges {
		switch e.rnd.IntN(40) {
		case 0:
			h.indices[k] = int32(nSrc + e.rnd.IntN(3)) // past the live sources
		case 1:
			h.indices[k] = -1
		}
	}
	return h
}

// withDegrees redraws the edges of the destinations in deg (those below
// h.nDst) with the given degrees, keeping the others' edges and the
// capacities' padding.
func (e *env) withDegrees(h hostBlock, deg map[int]int) hostBlock {
	out := h
	out.indptr = make([]int32, len(h.indptr))
	out.indices = nil
	for i := range h.nDst {
		if d, ok := deg[i]; ok {
			for range d {
				out.indices = append(out.indices, int32(e.rnd.IntN(h.nSrc)))
			}
		} else {
			out.indices = append(out.indices, h.indices[h.indptr[i]:h.indptr[i+1]]...)
		}
		out.indptr[i+1] = int32(len(out.indices))
	}
	pad := h.capEdges - h.nEdges
	out.nEdges = len(out.indices)
	out.capEdges = out.nEdges + pad
	copy(out.indptr[h.nDst+1:], h.indptr[h.nDst+1:])
	for range pad {
		out.indices = append(out.indices, 1<<30)
	}
	return out
}

// attPos lists the positions of destination i: sources (-1 if invalid,
// and for the self loop of a bipartite block) and coefficient rows.
func attPos(h hostBlock, i int, bip bool) (src, row []int) {
	src, row = []int{i}, []int{i}
	if bip {
		src[0] = -1
	}
	for k := h.indptr[i]; k < h.indptr[i+1]; k++ {
		j := int(h.indices[k])
		if j < 0 || j >= h.nSrc {
			j = -1
		}
		src, row = append(src, j), append(row, h.capDst+int(k))
	}
	return src, row
}

func testHeadDot(e *env) {
	for _, c := range [][2]int{{1, 1}, {3, 5}, {4, 16}, {2, 33}, {4, 64}, {4, 47}, {2, 130}, {33, 2}, {8, 19}, {4, 113}, {2, 6}} {
		heads, dim := c[0], c[1]
		const cp, live = 40, 31
		w := heads * dim
		x, a := e.randF32(cp*w, 1), e.randF32(w, 1)
		for i := live * w; i < cp*w; i++ {
			x[i] = float32(math.NaN()) // past the count: must not be read
		}
		out := e.poison(cp * heads)
		e.att().HeadDot(e.upload(x), e.count(live, cp), heads, dim, e.upload(a), out)
		want, scale := make([]float64, live*heads), make([]float64, live*heads)
		for i := range live {
			for h := range heads {
				for f := h * dim; f < (h+1)*dim; f++ {
					t := float64(x[i*w+f]) * float64(a[f])
					want[i*heads+h] += t
					scale[i*heads+h] += math.Abs(t)
				}
			}
		}
		e.checkClose(fmt.Sprintf("HeadDot heads=%d dim=%d", heads, dim), e.readF32(out, live*heads), want, scale, tolElem, heads)
	}
}

func testHeadDotBackward(e *env) {
	for _, c := range [][2]int{{1, 1}, {3, 5}, {4, 16}, {2, 33}, {4, 64}, {8, 8}, {1, 128}, {4, 47}, {8, 19}, {2, 6}} {
		heads, dim := c[0], c[1]
		const cp, live = 300, 211 // several chunks of rows
		w := heads * dim
		x, a, dout := e.randF32(cp*w, 1), e.randF32(w, 1), e.randF32(cp*heads, 1)
		dx0 := e.randF32(cp*w, 1)
		for i := live * w; i < cp*w; i++ {
			x[i] = float32(math.NaN())
		}
		dx, da, da2 := e.upload(dx0), e.poison(w), e.poison(w)
		db, ab := e.upload(dout), e.upload(a)
		// One HeadDot's backward: the pair with no rows in its second part.
		e.att().HeadDotBackward(e.upload(x), db, db, e.count(live, cp), e.count(0, cp), heads, dim, ab, ab, dx, true, da, da2)
		wantDx, scaleDx := make([]float64, live*w), make([]float64, live*w)
		wantDa, scaleDa := make([]float64, w), make([]float64, w)
		for i := range live {
			for col := range w {
				g := float64(dout[i*heads+col/dim])
				t := g * float64(a[col])
				wantDx[i*w+col] = float64(dx0[i*w+col]) + t
				scaleDx[i*w+col] = math.Abs(float64(dx0[i*w+col])) + math.Abs(t)
				wantDa[col] += g * float64(x[i*w+col])
				scaleDa[col] += math.Abs(g * float64(x[i*w+col]))
			}
		}
		name := fmt.Sprintf("HeadDotBackward heads=%d dim=%d", heads, dim)
		got := e.readF32(dx, cp*w)
		e.checkClose(name+" dx", got, wantDx, scaleDx, tolElem, w)
		checkEqual(e.t, name+" dx past the live rows", got[live*w:], dx0[live*w:], w)
		e.checkClose(name+" da", e.readF32(da, w), wantDa, scaleDa, tolElem, dim)
		checkEqual(e.t, name+" da of no rows", e.readF32(da2, w), make([]float32, w), dim)
	}
}

// testHeadDotBackwardPair: the pair in one call gives bitwise what its two
// parts give one after the other on the same backend (each with no rows
// in its second part), with the second count below the first (a GAT
// layer's destinations among its sources) or above.
func testHeadDotBackwardPair(e *env) {
	for _, c := range [][4]int{{1, 1, 211, 150}, {3, 5, 211, 64}, {4, 16, 131, 211}, {2, 33, 211, 0}, {4, 47, 211, 64}} {
		heads, dim, live1, live2 := c[0], c[1], c[2], c[3]
		const cp1, cp2 = 300, 260
		w := heads * dim
		x, a1, a2 := e.randF32(cp1*w, 1), e.randF32(w, 1), e.randF32(w, 1)
		d1, d2, dx0 := e.randF32(cp1*heads, 1), e.randF32(cp2*heads, 1), e.randF32(cp1*w, 1)
		for i := max(live1, live2) * w; i < cp1*w; i++ {
			x[i] = float32(math.NaN())
		}
		xb, d1b, d2b, a1b, a2b := e.upload(x), e.upload(d1), e.upload(d2), e.upload(a1), e.upload(a2)
		n1, n2 := e.count(live1, cp1), e.count(live2, cp2)
		dx, da1, da2 := e.upload(dx0), e.poison(w), e.poison(w)
		e.att().HeadDotBackward(xb, d1b, d2b, n1, n2, heads, dim, a1b, a2b, dx, true, da1, da2)
		rx, ra1, ra2, none := e.upload(dx0), e.poison(w), e.poison(w), e.poison(w)
		e.att().HeadDotBackward(xb, d1b, d1b, n1, e.count(0, cp1), heads, dim, a1b, a1b, rx, true, ra1, none)
		e.att().HeadDotBackward(xb, d2b, d2b, n2, e.count(0, cp2), heads, dim, a2b, a2b, rx, true, ra2, none)
		name := fmt.Sprintf("HeadDotBackward pair heads=%d dim=%d live=%d,%d", heads, dim, live1, live2)
		checkEqual(e.t, name+" dx", e.readF32(dx, cp1*w), e.readF32(rx, cp1*w), w)
		checkEqual(e.t, name+" da1", e.readF32(da1, w), e.readF32(ra1, w), dim)
		checkEqual(e.t, name+" da2", e.readF32(da2, w), e.readF32(ra2, w), dim)
	}
}

// attCase is one EdgeSoftmax configuration.
type attCase struct {
	heads int
	p     float32
	keys  bool
	bip   bool // a bipartite block
}

var attCases = []attCase{{1, 0, false, false}, {3, 0, false, false}, {2, 0.4, false, false}, {4, 0.5, true, false},
	{1, 0, false, true}, {3, 0.4, true, true}, {4, 0, false, false}, {8, 0, false, false}, {8, 0.3, true, false},
	{4, 0, false, true}, {8, 0.5, false, true}}

// attBlockOf is the block of an attention case: attBlock's, or with bip a
// bipartite one with more destinations than sources.
func (e *env) attBlockOf(bip bool) (hostBlock, *backend.Block) {
	if !bip {
		h := e.attBlock(35, 80)
		return h, e.uploadBlock(h)
	}
	h := e.attBlock(50, 20)
	blk := e.uploadBlock(h)
	blk.Bipartite = true
	return h, blk
}

// attRef is the float64 reference of EdgeSoftmax for destination i and
// head h: the coefficients of i's positions before dropout, each
// position's pre-activation el + er (float32, as the op adds it), and its
// scores' validity.
func attRef(h hostBlock, el, er []float32, heads, i, hd int, slope float32, bip bool) (alpha []float64, pre []float32) {
	src, _ := attPos(h, i, bip)
	alpha, pre = make([]float64, len(src)), make([]float32, len(src))
	m := math.Inf(-1)
	s := make([]float64, len(src))
	for k, j := range src {
		if j < 0 {
			continue
		}
		pre[k] = el[j*heads+hd] + er[i*heads+hd]
		v := pre[k]
		if !(v > 0) {
			v *= slope
		}
		s[k] = float64(v)
		m = math.Max(m, s[k])
	}
	var sum float64
	for k, j := range src {
		if j >= 0 {
			alpha[k] = math.Exp(s[k] - m)
			sum += alpha[k]
		}
	}
	for k := range alpha {
		if sum > 0 { // a bipartite block's destination without edges has no position
			alpha[k] /= sum
		}
	}
	return alpha, pre
}

// attKeep is the reference dropout decision of position k, head hd of
// destination i with Philox index idx.
func attKeep(key rng.Key, idx uint32, k, heads, hd int, p float32) bool {
	return p <= 0 || key.Word(idx, uint32(k*heads+hd)) >= rng.DropThreshold(p)
}

// attInputs draws el, er and the Rand of an attention case.
func (e *env) attInputs(h hostBlock, c attCase) (el, er []float32, r backend.Rand, keys []int32) {
	el, er = e.randF32(h.capSrc*c.heads, 2), e.randF32(h.capDst*c.heads, 2)
	r = e.rand(77, 160, 3, 9)
	idx := make([]int32, h.capDst)
	for i := range idx {
		idx[i] = int32(i)
	}
	if c.keys {
		for i := range idx {
			idx[i] = int32(1000 + e.rnd.IntN(5000))
		}
		r.Keys = e.upload(idx)
	}
	return el, er, r, idx
}

func testEdgeSoftmax(e *env) {
	const slope = 0.2
	for _, c := range attCases {
		name := fmt.Sprintf("EdgeSoftmax %+v", c)
		h, blk := e.attBlockOf(c.bip)
		el, er, r, idx := e.attInputs(h, c)
		coef := e.poison((h.capDst + h.capEdges) * c.heads)
		e.att().EdgeSoftmax(blk, e.upload(el), e.upload(er), c.heads, slope, c.p, r, coef)
		got := e.readF32(coef, (h.capDst+h.capEdges)*c.heads)
		key := rng.Key{Seed: r.Seed, Epoch: 3, Step: 9, Stream: r.Stream}
		var gotLive []float32
		var want []float64
		for i := range h.nDst {
			_, rows := attPos(h, i, c.bip)
			for hd := range c.heads {
				alpha, _ := attRef(h, el, er, c.heads, i, hd, slope, c.bip)
				for k, row := range rows {
					w := alpha[k]
					if c.p > 0 {
						w *= float64(1 / (1 - c.p))
						if !attKeep(key, uint32(idx[i]), k, c.heads, hd, c.p) {
							w = 0
						}
					}
					gotLive, want = append(gotLive, got[row*c.heads+hd]), append(want, w)
				}
			}
		}
		e.checkClose(name, gotLive, want, nil, tolElem, 0)
	}
}

func testEdgeSoftmaxBackward(e *env) {
	const slope = 0.2
	for _, c := range attCases {
		name := fmt.Sprintf("EdgeSoftmaxBackward %+v", c)
		h, blk := e.attBlockOf(c.bip)
		el, er, r, idx := e.attInputs(h, c)
		dcoef := e.randF32((h.capDst+h.capEdges)*c.heads, 1)
		del, der := e.poison(h.capSrc*c.heads), e.poison(h.capDst*c.heads)
		e.att().EdgeSoftmaxBackward(blk, e.upload(el), e.upload(er), c.heads, slope, c.p, r, e.upload(dcoef), del, der)
		key := rng.Key{Seed: r.Seed, Epoch: 3, Step: 9, Stream: r.Stream}
		wantL, scaleL := make([]float64, h.nSrc*c.heads), make([]float64, h.nSrc*c.heads)
		wantR, scaleR := make([]float64, h.nDst*c.heads), make([]float64, h.nDst*c.heads)
		for i := range h.nDst {
			src, rows := attPos(h, i, c.bip)
			for hd := range c.heads {
				alpha, pre := attRef(h, el, er, c.heads, i, hd, slope, c.bip)
				g := make([]float64, len(src))
				var s float64
				for k, row := range rows {
					g[k] = float64(dcoef[row*c.heads+hd])
					if c.p > 0 {
						g[k] *= float64(1 / (1 - c.p))
						if !attKeep(key, uint32(idx[i]), k, c.heads, hd, c.p) {
							g[k] = 0
						}
					}
					s += alpha[k] * g[k]
				}
				for k, j := range src {
					if j < 0 {
						continue
					}
					t := alpha[k] * (g[k] - s)
					if !(pre[k] > 0) {
						t *= slope
					}
					wantR[i*c.heads+hd] += t
					scaleR[i*c.heads+hd] += math.Abs(t) + 1e-6
					wantL[j*c.heads+hd] += t
					scaleL[j*c.heads+hd] += math.Abs(t)
				}
			}
		}
		for k := range scaleL {
			scaleL[k] += 1e-6
		}
		e.checkClose(name+" der", e.readF32(der, h.nDst*c.heads), wantR, scaleR, tolSum, c.heads)
		e.checkClose(name+" del", e.readF32(del, h.nSrc*c.heads), wantL, scaleL, tolSum, c.heads)
	}
}

// headAggCase is one HeadAggregate configuration: bip a bipartite block,
// acc HeadAggregate's acc (out holds values to add to).
type headAggCase struct {
	heads, dim int
	mean       bool
	bip, acc   bool
}

// The CUDA backend groups lanes per head up to 32 heads and a bounded
// width: {4, 64} and {4, 47, mean} are GAT's usual shapes; {33, 2} takes
// its general kernels, {3, 33} and {8, 19} its grouped ones a float at a
// time; up to four heads whose width is no whole number of float4 words in
// rows that are ({4, 47}, {2, 130}, {4, 113}, {2, 6}, {4, 5}) its flat ones.
var headAggCases = []headAggCase{{1, 1, false, false, false}, {3, 5, false, false, false}, {2, 16, false, false, false},
	{4, 8, true, false, false}, {3, 33, true, false, false}, {1, 7, true, false, false}, {4, 64, false, false, false},
	{4, 47, true, false, false}, {2, 130, true, false, false}, {33, 2, false, false, false}, {5, 40, false, false, false},
	{4, 64, false, true, true}, {4, 47, true, true, false}, {2, 130, true, true, true}, {33, 2, false, true, false},
	{3, 5, false, false, true}, {2, 16, true, false, true}, {8, 8, false, false, false}, {8, 64, false, false, false},
	{4, 128, false, false, false}, {1, 128, true, false, false}, {8, 128, false, true, true}, {1, 64, false, true, false},
	{8, 16, true, true, false}, {4, 47, false, false, false}, {4, 47, true, false, true}, {8, 19, true, false, false},
	{4, 113, true, false, false}, {2, 6, false, true, true}, {4, 5, true, false, false}}

// widths are x's width heads·dim and out's (dim with mean).
func (c headAggCase) widths() (w, ow int) {
	if c.mean {
		return c.heads * c.dim, c.dim
	}
	return c.heads * c.dim, c.heads * c.dim
}

// inputs draws a block, coefficients and x for c.
func (e *env) headAggInputs(c headAggCase) (h hostBlock, blk *backend.Block, coef, x []float32) {
	h = e.attBlock(40, 90)
	if c.bip {
		h = e.attBlock(60, 25)
	}
	blk = e.uploadBlock(h)
	blk.Bipartite = c.bip
	w, _ := c.widths()
	return h, blk, e.randF32((h.capDst+h.capEdges)*c.heads, 1), e.randF32(h.capSrc*w, 1)
}

// headAggRef is the float64 reference of HeadAggregate and its scale.
func headAggRef(h hostBlock, coef, x []float32, c headAggCase) (want, scale []float64) {
	heads, dim := c.heads, c.dim
	w, ow := c.widths()
	want, scale = make([]float64, h.nDst*ow), make([]float64, h.nDst*ow)
	for i := range h.nDst {
		src, rows := attPos(h, i, c.bip)
		for k, j := range src {
			if j < 0 {
				continue
			}
			for hd := range heads {
				cf := float64(coef[rows[k]*heads+hd])
				if c.mean {
					cf /= float64(heads)
				}
				for f := range dim {
					o := i*ow + hd*dim + f
					if c.mean {
						o = i*ow + f
					}
					t := cf * float64(x[j*w+hd*dim+f])
					want[o] += t
					scale[o] += math.Abs(t)
				}
			}
		}
	}
	return want, scale
}

func testHeadAggregate(e *env) {
	for _, c := range headAggCases {
		name := fmt.Sprintf("HeadAggregate %+v", c)
		h, blk, coef, x := e.headAggInputs(c)
		_, ow := c.widths()
		out := e.poison(h.capDst * ow)
		want, scale := headAggRef(h, coef, x, c)
		if c.acc {
			out0 := e.randF32(h.capDst*ow, 1)
			out = e.upload(out0)
			for k := range want {
				want[k] += float64(out0[k])
				scale[k] += math.Abs(float64(out0[k]))
			}
		}
		e.att().HeadAggregate(blk, e.upload(coef), e.upload(x), c.heads, c.dim, c.mean, out, c.acc)
		e.checkClose(name, e.readF32(out, h.nDst*ow), want, scale, tolSum, ow)
	}
}

// testHeadAggregateBackward: dcoef and dx against the references; dx is a
// view of a larger buffer whose tail (past the sources' capacity, which a
// bipartite block's destinations exceed) must stay as it was.
func testHeadAggregateBackward(e *env) {
	const guard = 1024
	for _, c := range headAggCases {
		name := fmt.Sprintf("HeadAggregateBackward %+v", c)
		h, blk, coef, x := e.headAggInputs(c)
		w, ow := c.widths()
		dout, dx0 := e.randF32(h.capDst*ow, 1), e.randF32(h.capSrc*w+guard, 1)
		whole := e.upload(dx0)
		dcoef, dx := e.poison((h.capDst+h.capEdges)*c.heads), e.be.View(whole, 0, h.capSrc*w)
		e.att().HeadAggregateBackward(blk, e.upload(coef), e.upload(x), e.upload(dout), c.heads, c.dim, c.mean, dcoef, dx)
		var wantC, scaleC []float64
		var gotC []float32
		gotAll := e.readF32(dcoef, (h.capDst+h.capEdges)*c.heads)
		wantX, scaleX := make([]float64, h.nSrc*w), make([]float64, h.nSrc*w)
		for k := range wantX {
			wantX[k], scaleX[k] = float64(dx0[k]), math.Abs(float64(dx0[k]))
		}
		for i := range h.nDst {
			src, rows := attPos(h, i, c.bip)
			for k, j := range src {
				for hd := range c.heads {
					var s, m float64
					for f := range c.dim {
						var d float64
						if c.mean {
							d = float64(dout[i*ow+f]) / float64(c.heads)
						} else {
							d = float64(dout[i*ow+hd*c.dim+f])
						}
						if j >= 0 {
							s += d * float64(x[j*w+hd*c.dim+f])
							m += math.Abs(d * float64(x[j*w+hd*c.dim+f]))
							t := float64(coef[rows[k]*c.heads+hd]) * d
							wantX[j*w+hd*c.dim+f] += t
							scaleX[j*w+hd*c.dim+f] += math.Abs(t)
						}
					}
					gotC, wantC, scaleC = append(gotC, gotAll[rows[k]*c.heads+hd]), append(wantC, s), append(scaleC, m)
				}
			}
		}
		e.checkClose(name+" dcoef", gotC, wantC, scaleC, tolSum, 0)
		got := e.readF32(whole, h.capSrc*w+guard)
		e.checkClose(name+" dx", got[:h.nSrc*w], wantX, scaleX, tolSum, w)
		checkEqual(e.t, name+" past dx", got[h.capSrc*w:], dx0[h.capSrc*w:], w)
	}
}
