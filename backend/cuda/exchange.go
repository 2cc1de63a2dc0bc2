package cuda

import (
	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.Exchanger = (*Backend)(nil)

// xch holds an Exchange's buffers, checked once per op.
type xch struct {
	where, held, ask, pos, asked, reply, got *buffer
	keep, tag, slot, gen, stats, need        *buffer
	numRows                                  int64
}

// exchange checks x's buffers (tag, slot and gen with Keep).
func (c *call) exchange(x *backend.Exchange) *xch {
	if x == nil {
		c.failf("x: nil exchange")
		return nil
	}
	if err := x.Check(); err != nil {
		c.failf("%v", err)
	}
	r, ch, d := x.Ranks, x.Chunk, x.Dim
	e := &xch{
		where: c.buf("x.Where", x.Where, backend.I32, 0),
		held:  c.buf("x.Held", x.Held, backend.F32, 0),
		ask:   c.buf("x.Ask", x.Ask, backend.I32, r*(ch+1)),
		pos:   c.buf("x.Pos", x.Pos, backend.I32, r*ch),
		asked: c.buf("x.Asked", x.Asked, backend.I32, r*(ch+1)),
		reply: c.buf("x.Reply", x.Reply, backend.F32, r*ch*d),
		got:   c.buf("x.Got", x.Got, backend.F32, r*ch*d),
		stats: c.optBuf("x.Stats", x.Stats, backend.I64, backend.ExchangeStats),
		need:  c.optBuf("x.Need", x.Need, backend.I32, 2),
	}
	if !c.ok {
		return nil
	}
	e.numRows = int64(e.where.n)
	if !isNil(x.Keep) {
		e.keep = c.buf("x.Keep", x.Keep, backend.F32, 2*x.KeepRows*d)
		e.tag = c.buf("x.Tag", x.Tag, backend.I32, e.where.n)
		e.slot = c.buf("x.Slot", x.Slot, backend.I32, e.where.n)
		e.gen = c.buf("x.Gen", x.Gen, backend.I32, 1)
	}
	if !c.ok {
		return nil
	}
	return e
}

// exchangeRows checks the arguments of an op over a gather's rows: x, the
// live count (its device address), ids (I32 [n.Cap]) and out (F32
// [n.Cap, x.Dim]).
func (c *call) exchangeRows(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) (e *xch, nP uintptr, idx, ob *buffer) {
	e = c.exchange(x)
	nP = c.count("n", n)
	idx = c.buf("ids", ids, backend.I32, n.Cap)
	if c.ok {
		ob = c.buf("out", out, backend.F32, n.Cap*x.Dim)
	}
	return e, nP, idx, ob
}

// keepRows is x.KeepRows with reuse on, else 0.
func (e *xch) keepRows(x *backend.Exchange) int {
	if e.keep == nil {
		return 0
	}
	return x.KeepRows
}

// ExchangeAsk zeroes the peers' counts, then copies held and kept rows and
// fills the peers' chunks (see backend.Exchanger): two launches.
func (b *Backend) ExchangeAsk(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("ExchangeAsk")
	defer c.end()
	e, nP, idx, ob := c.exchangeRows(x, ids, n, out)
	if !c.ok {
		return
	}
	c.args().ptr(e.ask.addr()).i32(x.Ranks).i32(x.Chunk).ptr(e.stats.addr()).ptr(e.need.addr())
	c.launch("xch_reset", d1(c.blocks(int64(x.Ranks), 256)), d1(256), 0)
	c.args().ptr(e.where.addr()).i64(e.numRows).ptr(e.held.addr()).i32(x.Dim).i32(x.Rank).i32(x.Ranks).
		i32(x.PerHost).i32(x.Chunk).ptr(e.ask.addr()).ptr(e.pos.addr()).ptr(idx.addr()).ptr(nP).i32(n.Cap).
		ptr(ob.addr()).ptr(e.keep.addr()).i32(e.keepRows(x)).ptr(e.tag.addr()).ptr(e.slot.addr()).ptr(e.gen.addr()).
		ptr(e.stats.addr()).ptr(e.need.addr()).ptr(b.errDev)
	c.launch("xch_ask", d1(c.blocks(int64(n.Cap)*int64(x.Dim), 256)), d1(256), 0)
}

// ExchangeServe copies the rows every peer asked for into Reply (see
// backend.Exchanger).
func (b *Backend) ExchangeServe(x *backend.Exchange) {
	c := b.begin("ExchangeServe")
	defer c.end()
	e := c.exchange(x)
	if !c.ok {
		return
	}
	c.args().ptr(e.where.addr()).i64(e.numRows).ptr(e.held.addr()).i32(x.Dim).i32(x.Ranks).i32(x.Chunk).
		ptr(e.asked.addr()).ptr(e.reply.addr()).ptr(b.errDev)
	c.launch("xch_serve", d1(c.blocks(int64(x.Ranks)*int64(x.Chunk)*int64(x.Dim), 256)), d1(256), 0)
}

// ExchangeTake places the rows the peers sent and, with reuse, tags the
// kept rows and advances the counter: three launches, so that no thread
// reads a tag another writes (see backend.Exchanger).
func (b *Backend) ExchangeTake(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("ExchangeTake")
	defer c.end()
	e, nP, idx, ob := c.exchangeRows(x, ids, n, out)
	if !c.ok {
		return
	}
	c.args().i32(x.Dim).i32(x.Ranks).i32(x.Chunk).ptr(e.ask.addr()).ptr(e.pos.addr()).ptr(e.got.addr()).
		ptr(ob.addr()).ptr(e.keep.addr()).i32(e.keepRows(x)).ptr(e.gen.addr())
	c.launch("xch_take", d1(c.blocks(int64(x.Ranks)*int64(x.Chunk)*int64(x.Dim), 256)), d1(256), 0)
	if e.keep == nil {
		return
	}
	c.args().ptr(e.where.addr()).i64(e.numRows).ptr(idx.addr()).ptr(nP).i32(n.Cap).i32(x.KeepRows).
		ptr(e.tag.addr()).ptr(e.slot.addr()).ptr(e.gen.addr())
	c.launch("xch_tag", d1(c.blocks(int64(min(n.Cap, x.KeepRows)), 256)), d1(256), 0)
	c.args().ptr(e.gen.addr())
	c.launch("peer_rows_advance", d1(1), d1(1), 0)
}
