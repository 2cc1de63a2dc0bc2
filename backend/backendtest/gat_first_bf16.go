package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The bfloat16 forms of the aggregate-first GAT ops (a bfloat16 bottom
// layer, nn's Config.BF16Bottom): SharedAggregate into a bfloat16 out and
// SharedAggregateBackward from a bfloat16 dout give the float32 forms'
// results rounded, or read widened, bit for bit; HeadLinear and its
// backwards over bfloat16 operands give the float32 products of the
// widened values, eagerly and replayed with NaN in the padding rows.

// testSharedAggregateBF16: every shape of sharedAggCases, a bfloat16 out
// against the float32 out rounded, and the backward of a bfloat16 dout
// against that of its float32 widening.
func testSharedAggregateBF16(e *env) {
	for _, c := range sharedAggCases {
		name := fmt.Sprintf("SharedAggregate bfloat16 out %+v", c)
		h, blk, coef, xb, _ := e.sharedAggInputs(c)
		w := c.heads * c.in
		cb := e.upload(coef)
		o32, o16 := e.poison(h.capDst*w), e.poisonBF16(h.capDst*w)
		e.att().SharedAggregate(blk, cb, xb, c.heads, c.in, o32)
		e.att().SharedAggregate(blk, cb, xb, c.heads, c.in, o16)
		checkEqual(e.t, name, e.readU16(o16, h.nDst*w), backend.ToBF16(e.readF32(o32, h.nDst*w)), w)

		name = fmt.Sprintf("SharedAggregateBackward bfloat16 dout %+v", c)
		bits, wide := e.bf16Host(h.capDst*w, 1)
		n := (h.capDst + h.capEdges) * c.heads
		d32, d16 := e.poison(n), e.poison(n)
		e.att().SharedAggregateBackward(blk, xb, e.upload(wide), c.heads, c.in, d32)
		e.att().SharedAggregateBackward(blk, xb, e.upload(bits), c.heads, c.in, d16)
		checkEqual(e.t, name, f32bits(e.readF32(d16, n)), f32bits(e.readF32(d32, n)), c.heads)
	}
}

// poisonBF16 returns a BF16 buffer of at least n NaNs (an even count: a
// fill of a bfloat16 buffer of odd length takes only values whose two
// bytes are equal).
func (e *env) poisonBF16(n int) backend.Buffer { return e.alloc(backend.BF16, n+n%2, math.NaN()) }

// headLinearBF16Shapes are headLinearShapes with even in and dim
// (bfloat16 products need them).
var headLinearBF16Shapes = []headLinearShape{{2, 2, 1, 2, 2}, {9, 7, 3, 6, 4}, {70, 64, 4, 100, 64}, {20, 0, 2, 6, 6},
	{33, 33, 8, 16, 8}, {6200, 4501, 2, 10, 6}}

// testHeadLinearBF16: HeadLinear, HeadLinearBackwardData (float32 and
// bfloat16 dx) and HeadLinearBackwardWeight over bfloat16 operands against
// the float64 sums of their widened values.
func testHeadLinearBF16(e *env) {
	for _, s := range headLinearBF16Shapes {
		hin, wd := s.heads*s.in, s.heads*s.dim
		xh, x := e.bf16Host(s.cap*hin, 1)
		dyh, dy := e.bf16Host(s.cap*wd, 1)
		wh, w := e.bf16Host(s.in*wd, 1)
		xb, dyb, wb, n := e.upload(xh), e.upload(dyh), e.upload(wh), e.count(s.live, s.cap)
		y, dx, dw := e.poison(s.cap*wd), e.poison(s.cap*hin), e.poison(s.in*wd)
		dx16 := e.poisonBF16(s.cap * hin)
		e.att().HeadLinear(xb, n, wb, s.heads, s.in, s.dim, y)
		e.att().HeadLinearBackwardData(dyb, n, wb, s.heads, s.in, s.dim, dx)
		e.att().HeadLinearBackwardData(dyb, n, wb, s.heads, s.in, s.dim, dx16)
		e.att().HeadLinearBackwardWeight(xb, dyb, n, s.heads, s.in, s.dim, dw)
		r := headLinearRef(s, x, w, dy)
		e.checkClose(fmt.Sprintf("HeadLinear bfloat16 %+v", s), e.readF32(y, s.live*wd), r.y, r.scaleY, tolSum, wd)
		e.checkClose(fmt.Sprintf("HeadLinearBackwardData bfloat16 %+v", s), e.readF32(dx, s.live*hin), r.dx, r.scaleX, tolSum, hin)
		e.checkClose(fmt.Sprintf("HeadLinearBackwardWeight bfloat16 %+v", s), e.readF32(dw, s.in*wd), r.dw, r.scaleW, tolSum, wd)
		// A bfloat16 dx holds the float32 sums rounded (as Linear's y).
		for i, v := range r.dx {
			r.scaleX[i] = math.Abs(v) + r.scaleX[i]*tolSum/tolBF16
		}
		e.checkClose(fmt.Sprintf("HeadLinearBackwardData bfloat16 dx %+v", s), widenBits(e.readU16(dx16, s.live*hin)), r.dx, r.scaleX, tolBF16, hin)
	}
	testHeadLinearBF16Capture(e)
}

// testHeadLinearBF16Capture: the bfloat16 head products captured and
// replayed (a GPU multiplies the whole capacity there) give the live
// rows' products, with NaN in the operands' padding rows, which are left
// as they were.
func testHeadLinearBF16Capture(e *env) {
	cp, ok := e.be.(backend.Capturer)
	if !ok {
		return
	}
	s := headLinearShape{cap: 6200, live: 4501, heads: 4, in: 100, dim: 64}
	hin, wd := s.heads*s.in, s.heads*s.dim
	xh, x := e.bf16Host(s.cap*hin, 1)
	dyh, dy := e.bf16Host(s.cap*wd, 1)
	wh, w := e.bf16Host(s.in*wd, 1)
	for i := s.live * hin; i < s.cap*hin; i++ {
		xh[i] = 0x7fc0 // NaN: must not reach the live rows or the weight gradient
	}
	for i := s.live * wd; i < s.cap*wd; i++ {
		dyh[i] = 0x7fc0
	}
	xb, dyb, wb, n := e.upload(xh), e.upload(dyh), e.upload(wh), e.count(s.live, s.cap)
	y, dx, dw := e.poison(s.cap*wd), e.poisonBF16(s.cap*hin), e.poison(s.in*wd)
	e.sync()
	rp := e.capture(cp, func() {
		e.att().HeadLinear(xb, n, wb, s.heads, s.in, s.dim, y)
		e.att().HeadLinearBackwardData(dyb, n, wb, s.heads, s.in, s.dim, dx)
		e.att().HeadLinearBackwardWeight(xb, dyb, n, s.heads, s.in, s.dim, dw)
	})
	rp.Launch()
	r := headLinearRef(s, x, w, dy)
	for i, v := range r.dx {
		r.scaleX[i] = math.Abs(v) + r.scaleX[i]*tolSum/tolBF16
	}
	e.checkClose("HeadLinear bfloat16 replayed", e.readF32(y, s.live*wd), r.y, r.scaleY, tolSum, wd)
	e.checkClose("HeadLinearBackwardData bfloat16 replayed", widenBits(e.readU16(dx, s.live*hin)), r.dx, r.scaleX, tolBF16, hin)
	e.checkClose("HeadLinearBackwardWeight bfloat16 replayed", e.readF32(dw, s.in*wd), r.dw, r.scaleW, tolSum, wd)
	checkEqual(e.t, "x after the replay", e.readU16(xb, s.cap*hin), xh, hin)
	checkEqual(e.t, "dy after the replay", e.readU16(dyb, s.cap*wd), dyh, wd)
}
