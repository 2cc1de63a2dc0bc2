package cuda

import "github.com/fanout-gnn/fanout/backend"

// Convert copies x into y of the same length: float32 to bfloat16 rounds
// to nearest even, bfloat16 to float32 widens, a like type copies. One
// launch.
func (b *Backend) Convert(x, y backend.Buffer) {
	c := b.begin("Convert")
	defer c.end()
	xb := c.f32or16("x", x, 0)
	var yb *buffer
	if c.ok {
		yb = c.f32or16("y", y, xb.n)
	}
	if c.ok && yb.n != xb.n {
		c.failf("y has %d elements, x %d", yb.n, xb.n)
	}
	if c.ok && xb.dt != yb.dt && xb.overlaps(yb) {
		c.failf("y overlaps x, of another type")
	}
	if !c.ok || xb.n == 0 {
		return
	}
	c.args().ptr(xb.addr()).ptr(yb.addr()).i64(int64(xb.n)).flag(xb.dt == backend.BF16).flag(yb.dt == backend.BF16)
	c.launch("convert", d1(c.blocks(int64(xb.n), 256)), d1(256), 0)
}
