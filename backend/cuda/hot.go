package cuda

import "github.com/fanout-gnn/fanout/backend"

// ReplaceRows overwrites the rows of hot vertices from table (or with
// zeros when table is nil); see backend.Dense and kernels/hot.cu. One
// launch.
func (b *Backend) ReplaceRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c, ck := b.checkReplaceRows(slot, table, base, dim, ids, n, out)
	defer c.end()
	if !c.ok {
		return
	}
	tableRows := int64(0)
	if ck.table != nil {
		tableRows = int64(ck.table.n / dim)
	}
	c.launchReplaceRows(&ck, tableRows, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// AddRows adds table rows into a column window of the rows of hot
// vertices (see backend.Dense); one launch, no atomics (each element is
// one thread's).
func (b *Backend) AddRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer, ld, off int) {
	c, ck := b.checkAddRows(slot, table, base, dim, ids, n, out, ld, off)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchAddRows(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// ScatterAddRows adds the rows of hot vertices into acc (see
// backend.Dense); one launch, no atomics (ids do not repeat).
func (b *Backend) ScatterAddRows(slot, acc backend.Buffer, dim int, ids backend.Buffer, n backend.Count, src, unless backend.Buffer) {
	c, ck := b.checkScatterAddRows(slot, acc, dim, ids, n, src, unless)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchScatterAddRows(&ck, d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// Axpy adds alpha·x to y; one launch.
func (b *Backend) Axpy(alpha float32, x, y backend.Buffer) {
	c, ck := b.checkAxpy(alpha, x, y)
	defer c.end()
	if !c.ok || ck.x.n == 0 {
		return
	}
	c.launchAxpy(&ck, d1(c.blocks(int64(ck.x.n), 256)), d1(256), 0)
}
