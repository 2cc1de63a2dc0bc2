package cuda

import "github.com/fanout-gnn/fanout/backend"

// Convert copies x into y of the same length: float32 to bfloat16 rounds
// to nearest even, bfloat16 to float32 widens, a like type copies. One
// launch.
func (b *Backend) Convert(x, y backend.Buffer) {
	c, ck := b.checkConvert(x, y)
	defer c.end()
	xb, yb := ck.x, ck.y
	if c.ok && xb.dt != yb.dt && xb.overlaps(yb) {
		c.failf("y overlaps x, of another type")
	}
	if !c.ok || xb.n == 0 {
		return
	}
	c.launchConvert(&ck, d1(c.blocks(int64(xb.n), 256)), d1(256), 0)
}
