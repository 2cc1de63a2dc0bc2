package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// bf16Shapes are linear shapes with even widths (bfloat16 products need
// them), live counts below capacity and 0.
var bf16Shapes = []linearShape{
	{1, 1, 2, 2}, {9, 7, 18, 34}, {70, 64, 100, 256}, {130, 127, 34, 48}, {20, 0, 6, 6}, {50, 50, 64, 2},
}

// bf16Host is random values rounded to bfloat16: the bits and their
// float32 values.
func (e *env) bf16Host(n int, scale float64) ([]uint16, []float32) {
	bits := backend.ToBF16(e.randF32(n, scale))
	return bits, widenBits(bits)
}

// testBF16Products checks the ops of bfloat16 products: Convert rounds and
// widens as backend.ToBF16 and BF16Float do; Linear and
// LinearBackwardWeight over bfloat16 operands give the float32 products of
// the widened values (within the sums' tolerance), also replayed from a
// capture whose padding rows hold NaN; BiasActDropoutBackward and
// AggregateConcat(Table) write the rounded float32 results, bit for bit.
// Mixed and odd-width operands are errors (stickyCases).
func testBF16Products(e *env) {
	vals := append(e.randF32(997, 3), 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.NaN()),
		math.Float32frombits(0x3f808000), math.Float32frombits(0x3f818000), 1e-40)
	h := e.alloc(backend.BF16, len(vals), 0)
	e.be.Convert(e.upload(vals), h)
	bits := e.readU16(h, len(vals))
	checkEqual(e.t, "Convert float32 to bfloat16", bits, backend.ToBF16(vals), 0)
	wide := e.poison(len(vals))
	e.be.Convert(h, wide)
	checkEqual(e.t, "Convert bfloat16 to float32", f32bits(e.readF32(wide, len(vals))), f32bits(widenBits(bits)), 0)

	for _, s := range bf16Shapes {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("Linear bfloat16 %+v accumulate=%v", s, acc)
			xb, x := e.bf16Host(s.cap*s.in, 1)
			wb, w := e.bf16Host(s.in*s.out, 1)
			y, y0 := e.initial(s.cap*s.out, acc)
			e.be.Linear(e.upload(xb), e.count(s.live, s.cap), e.upload(wb), s.in, s.out, y, acc)
			got := e.readF32(y, s.live*s.out)
			want, scale := matmulRef(false, false, s.live, s.out, s.in, 1, x, w, 1, y0)
			e.checkClose(name, got, want, scale, tolSum, s.out)

			// A bfloat16 y holds the float32 sums rounded: within tolBF16
			// of them, and the sums within tolSum of the terms' magnitudes.
			name = fmt.Sprintf("Linear bfloat16 y %+v accumulate=%v", s, acc)
			yh0 := backend.ToBF16(e.randF32(s.cap*s.out, 1))
			yh := e.upload(yh0)
			y0 = nil
			if acc {
				y0 = widenBits(yh0)
			}
			e.be.Linear(e.upload(xb), e.count(s.live, s.cap), e.upload(wb), s.in, s.out, yh, acc)
			want, scale = matmulRef(false, false, s.live, s.out, s.in, 1, x, w, 1, y0)
			for i, v := range want {
				scale[i] = math.Abs(v) + scale[i]*tolSum/tolBF16
			}
			e.checkClose(name, widenBits(e.readU16(yh, s.live*s.out)), want, scale, tolBF16, s.out)

			name = fmt.Sprintf("LinearBackwardWeight bfloat16 %+v accumulate=%v", s, acc)
			dyb, dy := e.bf16Host(s.cap*s.out, 1)
			dw, dw0 := e.initial(s.in*s.out, acc)
			e.be.LinearBackwardWeight(e.upload(xb), e.upload(dyb), e.count(s.live, s.cap), s.in, s.out, dw, acc)
			got = e.readF32(dw, s.in*s.out)
			want, scale = matmulRef(true, false, s.in, s.out, s.live, 1, x[:s.live*s.in], dy[:s.live*s.out], 1, dw0)
			e.checkClose(name, got, want, scale, tolSum, s.out)
		}
	}
	testBF16Rounded(e)
	testBF16Capture(e)

}

// testBF16Rounded: a bfloat16 dx of BiasActDropoutBackward, a bfloat16 y
// of BiasActDropout (from bfloat16 x, in place) and a bfloat16 out of
// AggregateConcat(Table) hold the float32 results rounded, bit for bit, and
// the bias gradient is that of the float32 values.
func testBF16Rounded(e *env) {
	const cp, live = 45, 37
	for _, dim := range []int{2, 16, 33, 100} {
		for _, p := range []float32{0, 0.5} {
			name := fmt.Sprintf("BiasActDropoutBackward bfloat16 dx dim=%d p=%g", dim, p)
			dy, y := e.upload(e.randF32(cp*dim, 1)), e.upload(e.randF32(cp*dim, 1))
			mask := make([]uint8, cp*dim)
			for i := range mask {
				mask[i] = uint8(e.rnd.IntN(2))
			}
			m := e.upload(mask)
			dx32, dx16 := e.poison(cp*dim), e.alloc(backend.BF16, cp*dim, 0)
			db32, db16 := e.poison(dim), e.poison(dim)
			e.be.BiasActDropoutBackward(dy, y, e.count(live, cp), dim, true, p, m, dx32, db32)
			e.be.BiasActDropoutBackward(dy, y, e.count(live, cp), dim, true, p, m, dx16, db16)
			checkEqual(e.t, name, e.readU16(dx16, live*dim), backend.ToBF16(e.readF32(dx32, live*dim)), dim)
			checkEqual(e.t, name+" dbias", f32bits(e.readF32(db16, dim)), f32bits(e.readF32(db32, dim)), dim)
		}

		for _, p := range []float32{0, 0.5} {
			name := fmt.Sprintf("BiasActDropout bfloat16 x dim=%d p=%g", dim, p)
			xb, x := e.bf16Host(cp*dim, 2)
			bias, r := e.upload(e.randF32(dim, 1)), e.rand(0xfeed1234abcd, 130, 3, 17)
			m32, m16 := e.alloc(backend.U8, cp*dim, 77), e.alloc(backend.U8, cp*dim, 77)
			y32, y16 := e.poison(cp*dim), e.upload(xb) // y16: in place over x
			e.be.BiasActDropout(e.upload(x), e.count(live, cp), dim, bias, true, p, r, m32, y32)
			e.be.BiasActDropout(y16, e.count(live, cp), dim, bias, true, p, r, m16, y16)
			checkEqual(e.t, name, e.readU16(y16, live*dim), backend.ToBF16(e.readF32(y32, live*dim)), dim)
			checkEqual(e.t, name+" mask", e.readU8(m16, live*dim), e.readU8(m32, live*dim), dim)
		}

		h := e.randomBlock(40, 90)
		blk, ew := e.uploadBlock(h), e.upload(e.randF32(h.capEdges, 1))
		xb, x := e.bf16Host(h.capSrc*dim, 1)
		ids := make([]int32, h.capSrc)
		for j := range ids {
			ids[j] = int32(j)
		}
		blk.SrcIDs = e.upload(ids)
		for _, in := range []struct {
			name string
			x    backend.Buffer
		}{{"float32 x", e.upload(x)}, {"bfloat16 x", e.upload(xb)}} {
			for _, table := range []bool{false, true} {
				name := fmt.Sprintf("AggregateConcat bfloat16 out, %s, table=%v, dim=%d", in.name, table, dim)
				o32, o16 := e.poison(h.capDst*2*dim), e.alloc(backend.BF16, h.capDst*2*dim, 0)
				if table {
					e.be.AggregateConcatTable(blk, ew, in.x, dim, o32)
					e.be.AggregateConcatTable(blk, ew, in.x, dim, o16)
				} else {
					e.be.AggregateConcat(blk, ew, in.x, dim, o32)
					e.be.AggregateConcat(blk, ew, in.x, dim, o16)
				}
				n := h.nDst * 2 * dim
				checkEqual(e.t, name, e.readU16(o16, n), backend.ToBF16(e.readF32(o32, n)), 2*dim)
			}
		}
	}
}

// widenBits is the float32 values of bfloat16 bits.
func widenBits(h []uint16) []float32 {
	out := make([]float32, len(h))
	for i, v := range h {
		out[i] = backend.BF16Float(v)
	}
	return out
}

// testBF16Capture: bfloat16 products captured and replayed (a GPU
// multiplies the whole capacity there) give the live rows' products, with
// NaN in the operands' padding rows, which are left as they were.
func testBF16Capture(e *env) {
	cp, ok := e.be.(backend.Capturer)
	if !ok {
		return
	}
	const capRows, live, in, out = 70, 53, 100, 256
	xb, x := e.bf16Host(capRows*in, 1)
	dyb, dy := e.bf16Host(capRows*out, 1)
	wb, w := e.bf16Host(in*out, 1)
	for i := live * in; i < capRows*in; i++ {
		xb[i] = 0x7fc0 // NaN: must not reach the live rows or the weight gradient
	}
	for i := live * out; i < capRows*out; i++ {
		dyb[i] = 0x7fc0
	}
	xs, dys, ws := e.upload(xb), e.upload(dyb), e.upload(wb)
	y, dw, n := e.poison(capRows*out), e.poison(in*out), e.count(live, capRows)
	e.sync()
	rp := e.capture(cp, func() {
		e.be.Linear(xs, n, ws, in, out, y, false)
		e.be.LinearBackwardWeight(xs, dys, n, in, out, dw, false)
	})
	rp.Launch()
	want, scale := matmulRef(false, false, live, out, in, 1, x, w, 1, nil)
	e.checkClose("Linear bfloat16 replayed", e.readF32(y, live*out), want, scale, tolSum, out)
	want, scale = matmulRef(true, false, in, out, live, 1, x[:live*in], dy[:live*out], 1, nil)
	e.checkClose("LinearBackwardWeight bfloat16 replayed", e.readF32(dw, in*out), want, scale, tolSum, out)
	checkEqual(e.t, "x after the replay", e.readU16(xs, capRows*in), xb, in)
	checkEqual(e.t, "dy after the replay", e.readU16(dys, capRows*out), dyb, out)
}
