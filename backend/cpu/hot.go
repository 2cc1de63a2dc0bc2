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
	eachHot(&c, idx[:rows], ss, off, len(tab)/dim, tab == nil, func(i, r int) {
		dstRow := os[i*dim : (i+1)*dim]
		if tab == nil {
			clear(dstRow)
			return
		}
		copy(dstRow, tab[r*dim:(r+1)*dim])
	})
}

// eachHot calls fn(i, base+s) for every row i of ids whose vertex has a
// slot s >= 0 (in order), and fails the call at an id outside the slot
// table or, unless anyRow, a row past rows.
func eachHot(c *call, ids, slot []int32, base, rows int, anyRow bool, fn func(i, r int)) {
	for i, v := range ids {
		if v < 0 || int(v) >= len(slot) {
			c.failf("ids[%d] = %d outside the slot table of %d vertices", i, v, len(slot))
			return
		}
		s := slot[v]
		if s < 0 {
			continue
		}
		r := base + int(s)
		if !anyRow && r >= rows {
			c.failf("slot[%d] = %d at base %d outside a table of %d rows", v, s, base, rows)
			return
		}
		fn(i, r)
	}
}

// AddRows adds table rows into a column window of the rows of hot
// vertices; see backend.Dense.
func (b *Backend) AddRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer, ld, off int) {
	c := b.begin("AddRows")
	defer c.end()
	c.dim("dim", dim)
	if err := backend.CheckColumns(off, dim, ld); c.ok && err != nil {
		c.failf("%v", err)
	}
	rows, _ := c.count("n", n)
	idx := c.i32("ids", ids, n.Cap)
	ss := c.i32("slot", slot, 0)
	os := c.f32("out", out, n.Cap*ld)
	tab := c.f32("table", table, 0)
	first, _ := c.count("base", backend.Count{Buf: base.Buf, Off: base.Off, Cap: 1 << 30})
	if !c.ok {
		return
	}
	eachHot(&c, idx[:rows], ss, first, len(tab)/dim, false, func(i, r int) {
		vec.Axpy(1, tab[r*dim:(r+1)*dim], os[i*ld+off:i*ld+off+dim])
	})
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
	eachHot(&c, idx[:rows], ss, 0, len(as)/dim, false, func(i, s int) {
		vec.Axpy(1, sr[i*dim:(i+1)*dim], as[s*dim:(s+1)*dim])
	})
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
