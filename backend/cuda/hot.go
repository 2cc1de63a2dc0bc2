package cuda

import "github.com/fanout-gnn/fanout/backend"

// ReplaceRows overwrites the rows of hot vertices from table (or with
// zeros when table is nil); see backend.Dense and kernels/hot.cu. One
// launch.
func (b *Backend) ReplaceRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("ReplaceRows")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	idx := c.buf("ids", ids, backend.I32, n.Cap)
	sb := c.buf("slot", slot, backend.I32, 0)
	ob := c.buf("out", out, backend.F32, n.Cap*dim)
	tb := c.optBuf("table", table, backend.F32, 0)
	var baseP uintptr
	if tb != nil {
		baseP = c.count("base", backend.Count{Buf: base.Buf, Off: base.Off, Cap: 1 << 30})
	}
	if !c.ok {
		return
	}
	tableRows := int64(0)
	if tb != nil {
		tableRows = int64(tb.n / dim)
	}
	c.args().ptr(sb.addr()).i64(int64(sb.n)).ptr(tb.addr()).i64(tableRows).ptr(baseP).i32(dim).ptr(idx.addr()).
		ptr(nP).i32(n.Cap).ptr(ob.addr()).ptr(b.errDev)
	c.launch("replace_rows", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// AddRows adds table rows into a column window of the rows of hot
// vertices (see backend.Dense); one launch, no atomics (each element is
// one thread's).
func (b *Backend) AddRows(slot, table backend.Buffer, base backend.Count, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer, ld, off int) {
	c := b.begin("AddRows")
	defer c.end()
	c.dim("dim", dim)
	if err := backend.CheckColumns(off, dim, ld); c.ok && err != nil {
		c.failf("%v", err)
	}
	nP := c.count("n", n)
	idx := c.buf("ids", ids, backend.I32, n.Cap)
	sb := c.buf("slot", slot, backend.I32, 0)
	ob := c.buf("out", out, backend.F32, n.Cap*ld)
	tb := c.buf("table", table, backend.F32, 0)
	baseP := c.count("base", backend.Count{Buf: base.Buf, Off: base.Off, Cap: 1 << 30})
	if !c.ok {
		return
	}
	c.args().ptr(sb.addr()).i64(int64(sb.n)).ptr(tb.addr()).i64(int64(tb.n / dim)).ptr(baseP).i32(dim).ptr(idx.addr()).
		ptr(nP).i32(n.Cap).ptr(ob.addr()).i32(ld).i32(off).ptr(b.errDev)
	c.launch("add_rows", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// ScatterAddRows adds the rows of hot vertices into acc (see
// backend.Dense); one launch, no atomics (ids do not repeat).
func (b *Backend) ScatterAddRows(slot, acc backend.Buffer, dim int, ids backend.Buffer, n backend.Count, src, unless backend.Buffer) {
	c := b.begin("ScatterAddRows")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	idx := c.buf("ids", ids, backend.I32, n.Cap)
	sb := c.buf("slot", slot, backend.I32, 0)
	ab := c.buf("acc", acc, backend.F32, 0)
	sr := c.buf("src", src, backend.F32, n.Cap*dim)
	u := c.optBuf("unless", unless, backend.I32, 1)
	if !c.ok {
		return
	}
	c.args().ptr(sb.addr()).i64(int64(sb.n)).ptr(ab.addr()).i64(int64(ab.n / dim)).i32(dim).ptr(idx.addr()).
		ptr(nP).i32(n.Cap).ptr(sr.addr()).ptr(u.addr()).ptr(b.errDev)
	c.launch("scatter_add_rows", d1(c.blocks(int64(n.Cap)*int64(dim), 256)), d1(256), 0)
}

// Axpy adds alpha·x to y; one launch.
func (b *Backend) Axpy(alpha float32, x, y backend.Buffer) {
	c := b.begin("Axpy")
	defer c.end()
	xb := c.buf("x", x, backend.F32, 0)
	var yb *buffer
	if c.ok {
		yb = c.buf("y", y, backend.F32, xb.n)
	}
	if c.ok && yb.n != xb.n {
		c.failf("y has %d elements, x %d", yb.n, xb.n)
	}
	if !c.ok || xb.n == 0 {
		return
	}
	c.args().f32(alpha).ptr(xb.addr()).ptr(yb.addr()).i64(int64(xb.n))
	c.launch("axpy", d1(c.blocks(int64(xb.n), 256)), d1(256), 0)
}
