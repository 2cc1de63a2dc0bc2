package cpu

import "github.com/fanout-gnn/fanout/backend"

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
