package cpu

import "github.com/fanout-gnn/fanout/backend"

// Convert copies x into y of the same length: float32 to bfloat16 rounds
// to nearest even, bfloat16 to float32 widens, a like type copies.
func (b *Backend) Convert(x, y backend.Buffer) {
	c := b.begin("Convert")
	defer c.end()
	xb := c.f32or16("x", x, 0)
	var yb *buffer
	if c.ok {
		yb = c.f32or16("y", y, xb.Len())
	}
	if c.ok && yb.Len() != xb.Len() {
		c.failf("y has %d elements, x %d", yb.Len(), xb.Len())
	}
	if !c.ok {
		return
	}
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

// operands returns the float32 values of a product's two operands, x (need
// elements) and w: F32 buffers as they are, or both BF16 widened into fresh
// slices (bfloat16 products: even widths, products and sums in float32).
func (c *call) operands(xn, wn string, x, w backend.Buffer, need, wneed int, widths ...int) (xs, ws []float32) {
	xb := c.f32or16(xn, x, need)
	if xb == nil {
		return nil, nil
	}
	if xb.dt == backend.F32 {
		return xb.f32, c.f32(wn, w, wneed)
	}
	wb := c.buf(wn, w, backend.BF16, wneed)
	if err := backend.CheckBF16Widths(widths...); c.ok && err != nil {
		c.failf("%v", err)
	}
	if !c.ok {
		return nil, nil
	}
	return widen(xb.u16[:need]), widen(wb.u16[:wneed])
}

func widen(h []uint16) []float32 {
	out := make([]float32, len(h))
	widenRow(out, h)
	return out
}
