package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The ops of a GAT layer that aggregates before it projects
// (SharedAggregate, HeadLinear and their backwards) against float64
// references, on the attention blocks of gat.go (invalid sources, a
// destination without edges, bipartite blocks), with float32 and bfloat16
// inputs.

// sharedAggCase is one shape: heads reading rows in wide.
type sharedAggCase struct {
	heads, in int
	bf16, bip bool
}

// The CUDA register kernels take up to 8 heads and 128 columns, four a
// lane, read at once where the width is a multiple of 4 ({4, 100},
// products-sim's bottom layer, {2, 64}, {8, 32}, {1, 128}: 2, 4, 8 and 1
// lanes' heads) and one at a time elsewhere ({1, 1}, {3, 5}, {2, 33}, {3,
// 10}); the others 8 heads and 128 columns per pass: {9, 130} and {12,
// 300} more than one pass of each.
var sharedAggCases = []sharedAggCase{{1, 1, false, false}, {3, 5, false, false}, {4, 100, false, false},
	{4, 100, true, false}, {9, 130, false, false}, {12, 300, true, false}, {2, 33, false, true}, {4, 100, true, true},
	{8, 32, false, false}, {1, 128, true, false}, {2, 64, false, true}, {3, 10, true, false}}

// sharedAggInputs draws a block, coefficients and x for c: x as uploaded
// (bfloat16 bits with bf16) and its values as the ops read them.
func (e *env) sharedAggInputs(c sharedAggCase) (h hostBlock, blk *backend.Block, coef []float32, xb backend.Buffer, x []float32) {
	h = e.attBlock(40, 90)
	if c.bip {
		h = e.attBlock(60, 25)
	}
	blk = e.uploadBlock(h)
	blk.Bipartite = c.bip
	x = e.randF32(h.capSrc*c.in, 1)
	xb = e.upload(x)
	if c.bf16 {
		bits := backend.ToBF16(x)
		for k, v := range bits {
			x[k] = backend.BF16Float(v)
		}
		xb = e.upload(bits)
	}
	return h, blk, e.randF32((h.capDst+h.capEdges)*c.heads, 1), xb, x
}

// testSharedAggregate: out against Σ coef·x in float64.
func testSharedAggregate(e *env) {
	for _, c := range sharedAggCases {
		name := fmt.Sprintf("SharedAggregate %+v", c)
		h, blk, coef, xb, x := e.sharedAggInputs(c)
		w := c.heads * c.in
		want, scale := make([]float64, h.nDst*w), make([]float64, h.nDst*w)
		for i := range h.nDst {
			src, rows := attPos(h, i, c.bip)
			for k, j := range src {
				if j < 0 {
					continue
				}
				for hd := range c.heads {
					for f := range c.in {
						t := float64(coef[rows[k]*c.heads+hd]) * float64(x[j*c.in+f])
						want[i*w+hd*c.in+f] += t
						scale[i*w+hd*c.in+f] += math.Abs(t)
					}
				}
			}
		}
		out := e.poison(h.capDst * w)
		e.att().SharedAggregate(blk, e.upload(coef), xb, c.heads, c.in, out)
		e.checkClose(name, e.readF32(out, h.nDst*w), want, scale, tolSum, w)
	}
}

// testSharedAggregateBackward: dcoef of every live position against the
// float64 dots, 0 where the position has no live source.
func testSharedAggregateBackward(e *env) {
	for _, c := range sharedAggCases {
		name := fmt.Sprintf("SharedAggregateBackward %+v", c)
		h, blk, _, xb, x := e.sharedAggInputs(c)
		w := c.heads * c.in
		dout := e.randF32(h.capDst*w, 1)
		dcoef := e.poison((h.capDst + h.capEdges) * c.heads)
		e.att().SharedAggregateBackward(blk, xb, e.upload(dout), c.heads, c.in, dcoef)
		all := e.readF32(dcoef, (h.capDst+h.capEdges)*c.heads)
		var got []float32
		var want, scale []float64
		for i := range h.nDst {
			src, rows := attPos(h, i, c.bip)
			for k, j := range src {
				for hd := range c.heads {
					var s, m float64
					for f := 0; j >= 0 && f < c.in; f++ {
						t := float64(dout[i*w+hd*c.in+f]) * float64(x[j*c.in+f])
						s, m = s+t, m+math.Abs(t)
					}
					got, want, scale = append(got, all[rows[k]*c.heads+hd]), append(want, s), append(scale, m)
				}
			}
		}
		e.checkClose(name, got, want, scale, tolSum, 0)
	}
}

// headLinearShape is a HeadLinear shape: cap rows, live of them, heads
// blocks of in columns projected to dim each.
type headLinearShape struct{ cap, live, heads, in, dim int }

// headLinearShapes: products-sim's bottom layer {4, 100, 64}, odd sizes,
// live counts below capacity and 0, and rows enough for a weight gradient
// split into parts with rows left over (the CUDA backend's splitRows:
// 4,501 live rows, 6,200 replayed).
var headLinearShapes = []headLinearShape{{1, 1, 1, 1, 1}, {9, 7, 3, 5, 4}, {70, 64, 4, 100, 64}, {20, 0, 2, 5, 6},
	{40, 33, 5, 7, 3}, {33, 33, 8, 16, 8}, {6200, 4501, 2, 10, 6}}

// testHeadLinear: HeadLinear and its backwards against float64 sums over
// each head's blocks (the live rows; the weight gradient sums only them).
func testHeadLinear(e *env) {
	for _, s := range headLinearShapes {
		hin, wd := s.heads*s.in, s.heads*s.dim
		x, dy, w := e.randF32(s.cap*hin, 1), e.randF32(s.cap*wd, 1), e.randF32(s.in*wd, 1)
		y, dx, dw := e.poison(s.cap*wd), e.poison(s.cap*hin), e.poison(s.in*wd)
		xb, dyb, wb := e.upload(x), e.upload(dy), e.upload(w)
		e.att().HeadLinear(xb, e.count(s.live, s.cap), wb, s.heads, s.in, s.dim, y)
		e.att().HeadLinearBackwardData(dyb, e.count(s.live, s.cap), wb, s.heads, s.in, s.dim, dx)
		e.att().HeadLinearBackwardWeight(xb, dyb, e.count(s.live, s.cap), s.heads, s.in, s.dim, dw)
		r := headLinearRef(s, x, w, dy)
		e.checkClose(fmt.Sprintf("HeadLinear %+v", s), e.readF32(y, s.live*wd), r.y, r.scaleY, tolSum, wd)
		e.checkClose(fmt.Sprintf("HeadLinearBackwardData %+v", s), e.readF32(dx, s.live*hin), r.dx, r.scaleX, tolSum, hin)
		e.checkClose(fmt.Sprintf("HeadLinearBackwardWeight %+v", s), e.readF32(dw, s.in*wd), r.dw, r.scaleW, tolSum, wd)
	}
}

// headLinearWant is HeadLinear's and its backwards' float64 results over
// the live rows of a shape, and the magnitudes of their terms.
type headLinearWant struct{ y, scaleY, dx, scaleX, dw, scaleW []float64 }

// headLinearRef sums each head's blocks of x [cap, heads·in], w [in,
// heads·dim] and dy [cap, heads·dim] in float64.
func headLinearRef(s headLinearShape, x, w, dy []float32) headLinearWant {
	hin, wd := s.heads*s.in, s.heads*s.dim
	r := headLinearWant{make([]float64, s.live*wd), make([]float64, s.live*wd), make([]float64, s.live*hin),
		make([]float64, s.live*hin), make([]float64, s.in*wd), make([]float64, s.in*wd)}
	for i := range s.live {
		for h := range s.heads {
			for f := range s.in {
				for c := range s.dim {
					xv, wv, dv := float64(x[i*hin+h*s.in+f]), float64(w[f*wd+h*s.dim+c]), float64(dy[i*wd+h*s.dim+c])
					r.y[i*wd+h*s.dim+c] += xv * wv
					r.scaleY[i*wd+h*s.dim+c] += math.Abs(xv * wv)
					r.dx[i*hin+h*s.in+f] += dv * wv
					r.scaleX[i*hin+h*s.in+f] += math.Abs(dv * wv)
					r.dw[f*wd+h*s.dim+c] += xv * dv
					r.scaleW[f*wd+h*s.dim+c] += math.Abs(xv * dv)
				}
			}
		}
	}
	return r
}

// scoreShape is a ScoreProducts shape: cap rows, live of them, for the
// first product, cap2 and live2 for the second, in wide, heads columns.
type scoreShape struct{ cap, live, cap2, live2, in, heads int }

// scoreShapes: products-sim's bottom layer {4 heads, 100 wide, the
// destinations a third of the sources}, widths that take one value at a
// time, rows past a chunk of the weight gradient's partial sums, no live
// row, a second product over more rows than the first or none, and a
// width whose weights pass the default shared memory of the CUDA kernels
// (1,600 columns at 8 heads).
var scoreShapes = []scoreShape{{1, 1, 1, 1, 1, 1}, {40, 29, 20, 11, 100, 4}, {300, 257, 300, 80, 33, 3},
	{600, 600, 600, 600, 64, 8}, {9, 0, 9, 0, 5, 2}, {70, 61, 30, 23, 1600, 8}, {50, 37, 60, 49, 10, 5},
	{520, 300, 0, 0, 100, 4}}

// testScoreProducts: ScoreProducts and its backward against float64 sums,
// a bfloat16 x against its float32 widening bit for bit, and each product
// of the pair bit for bit as it is alone (a zero count as the other).
func testScoreProducts(e *env) {
	for _, s := range scoreShapes {
		rows := max(s.cap, s.cap2)
		x, u1, u2 := e.randF32(rows*s.in, 1), e.randF32(s.in*s.heads, 1), e.randF32(s.in*s.heads, 1)
		dy1, dy2 := e.randF32(s.cap*s.heads, 1), e.randF32(s.cap2*s.heads, 1)
		bits := backend.ToBF16(x)
		for k, v := range bits {
			x[k] = backend.BF16Float(v)
		}
		n1, n2 := e.count(s.live, s.cap), e.count(s.live2, s.cap2)
		u1b, u2b, dy1b, dy2b := e.upload(u1), e.upload(u2), e.upload(dy1), e.upload(dy2)
		type out struct{ y1, y2, du1, du2 []float32 }
		run := func(xb backend.Buffer, n1, n2 backend.Count, u1b, u2b, dy1b, dy2b backend.Buffer, l1, l2 int) out {
			y1, y2 := e.poison(max(1, n1.Cap)*s.heads), e.poison(max(1, n2.Cap)*s.heads)
			du1, du2 := e.poison(s.in*s.heads), e.poison(s.in*s.heads)
			e.att().ScoreProducts(xb, n1, n2, u1b, u2b, s.in, s.heads, y1, y2)
			e.att().ScoreProductsBackward(xb, dy1b, dy2b, n1, n2, s.in, s.heads, du1, du2)
			return out{e.readF32(y1, l1*s.heads), e.readF32(y2, l2*s.heads), e.readF32(du1, s.in*s.heads), e.readF32(du2, s.in*s.heads)}
		}
		xb := e.upload(x)
		got := run(xb, n1, n2, u1b, u2b, dy1b, dy2b, s.live, s.live2)
		half := run(e.upload(bits), n1, n2, u1b, u2b, dy1b, dy2b, s.live, s.live2)
		alone1 := run(xb, n1, e.count(0, s.cap2), u1b, u2b, dy1b, dy2b, s.live, 0)
		alone2 := run(xb, n2, e.count(0, s.cap), u2b, u1b, dy2b, dy1b, s.live2, 0)
		name := fmt.Sprintf("ScoreProducts %+v", s)
		for _, p := range []struct {
			what    string
			y, du   []float32
			u, dy   []float32
			live    int
			hy, hdu []float32
			alone   out
		}{
			{"first", got.y1, got.du1, u1, dy1, s.live, half.y1, half.du1, alone1},
			{"second", got.y2, got.du2, u2, dy2, s.live2, half.y2, half.du2, alone2},
		} {
			wantY, scaleY := make([]float64, p.live*s.heads), make([]float64, p.live*s.heads)
			wantU, scaleU := make([]float64, s.in*s.heads), make([]float64, s.in*s.heads)
			for i := range p.live {
				for f := range s.in {
					for h := range s.heads {
						xv := float64(x[i*s.in+f])
						t, g := xv*float64(p.u[f*s.heads+h]), xv*float64(p.dy[i*s.heads+h])
						wantY[i*s.heads+h] += t
						scaleY[i*s.heads+h] += math.Abs(t)
						wantU[f*s.heads+h] += g
						scaleU[f*s.heads+h] += math.Abs(g)
					}
				}
			}
			e.checkClose(name+" y, "+p.what, p.y, wantY, scaleY, tolSum, s.heads)
			e.checkClose(name+" du, "+p.what, p.du, wantU, scaleU, tolSum, s.heads)
			checkEqual(e.t, name+" y, bfloat16 x, "+p.what, p.hy, p.y, s.heads)
			checkEqual(e.t, name+" du, bfloat16 x, "+p.what, p.hdu, p.du, s.heads)
			checkEqual(e.t, name+" y alone, "+p.what, p.alone.y1, p.y, s.heads)
			checkEqual(e.t, name+" du alone, "+p.what, p.alone.du1, p.du, s.heads)
		}
	}
}
