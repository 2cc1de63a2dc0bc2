package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// ReplaceRows overwrites the rows of hot vertices from table (or with
// zeros when table is nil); see backend.Dense.
func (b *Backend) ReplaceRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("ReplaceRows")
	defer c.end()
	c.dim("dim", dim)
	rows, _ := c.count("n", n)
	idx := c.i32("ids", ids, n.Cap)
	ss := c.i32("slot", slot, 0)
	os := c.f32("out", out, n.Cap*dim)
	var tab []float32
	off := 0
	if !isNil(table) {
		tab = c.f32("table", table, 0)
		off, _ = c.count("base", backend.Count{Buf: base.Buf, Off: base.Off, Cap: 1 << 30})
	}
	if !c.ok {
		return
	}
	tableRows := len(tab) / dim
	for i, v := range idx[:rows] {
		if v < 0 || int(v) >= len(ss) {
			c.failf("ids[%d] = %d outside the slot table of %d vertices", i, v, len(ss))
			return
		}
		s := ss[v]
		if s < 0 {
			continue
		}
		dstRow := os[i*dim : (i+1)*dim]
		if tab == nil {
			clear(dstRow)
			continue
		}
		r := off + int(s)
		if r >= tableRows {
			c.failf("slot[%d] = %d at base %d outside the table of %d rows", v, s, off, tableRows)
			return
		}
		copy(dstRow, tab[r*dim:(r+1)*dim])
	}
}

// ScatterAddRows adds the rows of hot vertices into acc; see
// backend.Dense.
func (b *Backend) ScatterAddRows(slot, acc backend.Buffer, dim int, ids backend.Buffer, n backend.Count, src, unless backend.Buffer) {
	c := b.begin("ScatterAddRows")
	defer c.end()
	c.dim("dim", dim)
	rows, _ := c.count("n", n)
	idx := c.i32("ids", ids, n.Cap)
	ss := c.i32("slot", slot, 0)
	as := c.f32("acc", acc, 0)
	sr := c.f32("src", src, n.Cap*dim)
	if c.flag("unless", unless) || !c.ok {
		return
	}
	accRows := len(as) / dim
	for i, v := range idx[:rows] {
		if v < 0 || int(v) >= len(ss) {
			c.failf("ids[%d] = %d outside the slot table of %d vertices", i, v, len(ss))
			return
		}
		s := int(ss[v])
		if s < 0 {
			continue
		}
		if s >= accRows {
			c.failf("slot[%d] = %d outside the accumulator of %d rows", v, s, accRows)
			return
		}
		vec.Axpy(1, sr[i*dim:(i+1)*dim], as[s*dim:(s+1)*dim])
	}
}

// Axpy adds alpha·x to y.
func (b *Backend) Axpy(alpha float32, x, y backend.Buffer) {
	c := b.begin("Axpy")
	defer c.end()
	xs := c.f32("x", x, 0)
	var ys []float32
	if c.ok {
		ys = c.f32("y", y, len(xs))
	}
	if c.ok && len(ys) != len(xs) {
		c.failf("y has %d elements, x %d", len(ys), len(xs))
	}
	if !c.ok {
		return
	}
	vec.Axpy(alpha, xs, ys)
}
