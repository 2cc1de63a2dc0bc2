package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// ReplaceRows overwrites the rows of hot vertices from table (or with
// zeros when table is nil); see backend.Dense.
func (b *Backend) ReplaceRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c, ck := b.checkReplaceRows(slot, table, base, dim, ids, n, out)
	defer c.end()
	if !c.ok {
		return
	}
	os, tab, off := ck.out, ck.table, 0
	if tab != nil {
		off = rowOffset(ck.baseP)
	}
	eachHot(&c, ck.ids[:ck.n], ck.slot, off, len(tab)/dim, tab == nil, func(i, r int) {
		dstRow := os[i*dim : (i+1)*dim]
		if tab == nil {
			clear(dstRow)
			return
		}
		copy(dstRow, tab[r*dim:(r+1)*dim])
	})
}

// rowOffset is the live value of a counter read as a first row: clamped
// to [0, 2^30].
func rowOffset(p *int32) int { return min(max(int(*p), 0), 1<<30) }

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
	c, ck := b.checkAddRows(slot, table, base, dim, ids, n, out, ld, off)
	defer c.end()
	if !c.ok {
		return
	}
	os, tab := ck.out, ck.table
	eachHot(&c, ck.ids[:ck.n], ck.slot, rowOffset(ck.baseP), len(tab)/dim, false, func(i, r int) {
		vec.Axpy(1, tab[r*dim:(r+1)*dim], os[i*ld+off:i*ld+off+dim])
	})
}

// ScatterAddRows adds the rows of hot vertices into acc; see
// backend.Dense.
func (b *Backend) ScatterAddRows(slot, acc backend.Buffer, dim int, ids backend.Buffer, n backend.Count, src, unless backend.Buffer) {
	c, ck := b.checkScatterAddRows(slot, acc, dim, ids, n, src, unless)
	defer c.end()
	if !c.ok || ck.unless {
		return
	}
	as, sr := ck.acc, ck.src
	eachHot(&c, ck.ids[:ck.n], ck.slot, 0, len(as)/dim, false, func(i, s int) {
		vec.Axpy(1, sr[i*dim:(i+1)*dim], as[s*dim:(s+1)*dim])
	})
}

// Axpy adds alpha·x to y.
func (b *Backend) Axpy(alpha float32, x, y backend.Buffer) {
	c, ck := b.checkAxpy(alpha, x, y)
	defer c.end()
	if c.ok {
		vec.Axpy(alpha, ck.x, ck.y)
	}
}
