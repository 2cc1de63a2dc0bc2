package cpu

import "github.com/fanout-gnn/fanout/backend"

// Convert copies x into y of the same length: float32 to bfloat16 rounds
// to nearest even, bfloat16 to float32 widens, a like type copies.
func (b *Backend) Convert(x, y backend.Buffer) {
	c, ck := b.checkConvert(x, y)
	defer c.end()
	if !c.ok {
		return
	}
	xb, yb := ck.x, ck.y
	switch {
	case xb.dt == yb.dt && xb.dt == backend.F32:
		copy(yb.f32, xb.f32)
	case xb.dt == yb.dt:
		copy(yb.u16, xb.u16)
	case xb.dt == backend.F32:
		b.rows(len(xb.f32), 4096, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				yb.u16[i] = backend.BF16Bits(xb.f32[i])
			}
		})
	default:
		widenRow(yb.f32, xb.u16)
	}
}

// operands returns the float32 values of a product's two checked operands
// of one type, x (need elements) and w (wneed): F32 buffers as they are,
// or both BF16 widened into fresh slices (bfloat16 products: products and
// sums in float32).
func operands(x, w *buffer, need, wneed int) (xs, ws []float32) {
	return floats(x, need), floats(w, wneed)
}

// floats is the float32 values of a checked operand's first need
// elements: an F32 buffer as it is, a BF16 one widened into a fresh slice.
func floats(x *buffer, need int) []float32 {
	if x.dt == backend.BF16 {
		return widen(x.u16[:need])
	}
	return x.f32
}

func widen(h []uint16) []float32 {
	out := make([]float32, len(h))
	widenRow(out, h)
	return out
}
