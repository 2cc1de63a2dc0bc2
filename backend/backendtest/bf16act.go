package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// testBF16Activations checks the ops that take bfloat16 activations
// against the same ops over float32: BiasActDropout writes its float32
// results rounded (and the same mask), BiasActDropoutBackward gates by the
// rounded values, and AggregateConcat widens x as it reads it, bit for bit.
func testBF16Activations(e *env) {
	const cp, live = 45, 37
	for _, c := range dropCases {
		name := fmt.Sprintf("BiasActDropout bfloat16 y %+v", c)
		x := e.upload(e.randF32(cp*c.dim, 2))
		var bias backend.Buffer
		if c.bias {
			bias = e.upload(e.randF32(c.dim, 1))
		}
		r := e.rand(0xfeed1234abcd, 130, 3, 17)
		var m32, m16 backend.Buffer
		if c.p > 0 {
			m32, m16 = e.alloc(backend.U8, cp*c.dim, 77), e.alloc(backend.U8, cp*c.dim, 77)
		}
		y32, y16 := e.poison(cp*c.dim), e.alloc(backend.BF16, cp*c.dim, 0)
		e.be.BiasActDropout(x, e.count(live, cp), c.dim, bias, c.relu, c.p, r, m32, y32)
		e.be.BiasActDropout(x, e.count(live, cp), c.dim, bias, c.relu, c.p, r, m16, y16)
		checkEqual(e.t, name, e.readU16(y16, live*c.dim), backend.ToBF16(e.readF32(y32, live*c.dim)), c.dim)
		if c.p > 0 {
			checkEqual(e.t, name+" mask", e.readU8(m16, live*c.dim), e.readU8(m32, live*c.dim), c.dim)
		}
	}
	for _, dim := range []int{1, 16, 33, 100} {
		name := fmt.Sprintf("BiasActDropoutBackward bfloat16 y dim=%d", dim)
		bits := backend.ToBF16(e.randF32(cp*dim, 1))
		wide := make([]float32, len(bits))
		for i, h := range bits {
			wide[i] = backend.BF16Float(h)
		}
		dy := e.upload(e.randF32(cp*dim, 1))
		dx32, dx16 := e.poison(cp*dim), e.poison(cp*dim)
		db32, db16 := e.poison(dim), e.poison(dim)
		e.be.BiasActDropoutBackward(dy, e.upload(wide), e.count(live, cp), dim, true, 0, nil, dx32, db32)
		e.be.BiasActDropoutBackward(dy, e.upload(bits), e.count(live, cp), dim, true, 0, nil, dx16, db16)
		checkEqual(e.t, name, f32bits(e.readF32(dx16, live*dim)), f32bits(e.readF32(dx32, live*dim)), dim)
		checkEqual(e.t, name+" dbias", f32bits(e.readF32(db16, dim)), f32bits(e.readF32(db32, dim)), dim)

		name = fmt.Sprintf("AggregateConcat bfloat16 x dim=%d", dim)
		h := e.randomBlock(40, 90)
		bits = backend.ToBF16(e.randF32(h.capSrc*dim, 1))
		wide = make([]float32, len(bits))
		for i, v := range bits {
			wide[i] = backend.BF16Float(v)
		}
		blk, ew := e.uploadBlock(h), e.upload(e.randF32(h.capEdges, 1))
		o32, o16 := e.poison(h.capDst*2*dim), e.poison(h.capDst*2*dim)
		e.be.AggregateConcat(blk, ew, e.upload(wide), dim, o32)
		e.be.AggregateConcat(blk, ew, e.upload(bits), dim, o16)
		checkEqual(e.t, name, f32bits(e.readF32(o16, h.nDst*2*dim)), f32bits(e.readF32(o32, h.nDst*2*dim)), 2*dim)
	}
}
