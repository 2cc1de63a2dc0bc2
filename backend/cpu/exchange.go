package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.Exchanger = (*Backend)(nil)

// xch holds an Exchange's buffers as slices, checked once per op.
type xch struct {
	where, ask, pos, asked []int32
	tag, slot, gen, need   []int32
	held, reply, got, keep []float32
	stats                  []int64
}

// exchange checks x's buffers (the ones every op reads; tag, slot and gen
// with Keep).
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
		where: c.i32("x.Where", x.Where, 0),
		held:  c.f32("x.Held", x.Held, 0),
		ask:   c.i32("x.Ask", x.Ask, r*(ch+1)),
		pos:   c.i32("x.Pos", x.Pos, r*ch),
		asked: c.i32("x.Asked", x.Asked, r*(ch+1)),
		reply: c.f32("x.Reply", x.Reply, r*ch*d),
		got:   c.f32("x.Got", x.Got, r*ch*d),
	}
	if !isNil(x.Keep) {
		e.keep = c.f32("x.Keep", x.Keep, 2*x.KeepRows*d)
		e.tag = c.i32("x.Tag", x.Tag, len(e.where))
		e.slot = c.i32("x.Slot", x.Slot, len(e.where))
		e.gen = c.i32("x.Gen", x.Gen, 1)
	}
	if !isNil(x.Stats) {
		e.stats = c.i64("x.Stats", x.Stats, backend.ExchangeStats)
	}
	if !isNil(x.Need) {
		e.need = c.i32("x.Need", x.Need, 2)
	}
	if !c.ok {
		return nil
	}
	return e
}

// exchangeRows checks the arguments of an op over a gather's rows: x, the
// live count, ids (I32 [n.Cap]) and out (F32 [n.Cap, x.Dim]).
func (c *call) exchangeRows(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) (e *xch, live int, idx []int32, os []float32) {
	e = c.exchange(x)
	live, _ = c.count("n", n)
	idx = c.i32("ids", ids, n.Cap)
	if c.ok {
		os = c.f32("out", out, n.Cap*x.Dim)
	}
	return e, live, idx, os
}

// heldRow is row w of Held, or nil (recording an error) past its end.
func (c *call) heldRow(e *xch, w int32, dim int) []float32 {
	if w < 0 || int(w+1)*dim > len(e.held) {
		c.failf("x.Where: row %d outside the %d rows held", w, len(e.held)/dim)
		return nil
	}
	return e.held[int(w)*dim : int(w+1)*dim]
}

// ExchangeAsk writes held and kept rows and fills the peers' chunks (see
// backend.Exchanger).
func (b *Backend) ExchangeAsk(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("ExchangeAsk")
	defer c.end()
	e, live, idx, os := c.exchangeRows(x, ids, n, out)
	if !c.ok {
		return
	}
	dim, ch := x.Dim, x.Chunk
	for p := range x.Ranks {
		e.ask[p*(ch+1)] = 0
	}
	if e.need != nil {
		e.need[0] = 0
	}
	var counts [backend.ExchangeStats]int64
	counts[backend.ExchangeChunk] = int64(ch)
	counts[backend.ExchangeGathers] = 1
	var prev, cur []float32
	var g int32
	if e.keep != nil {
		g = e.gen[0]
		half := x.KeepRows * dim
		prev, cur = e.keep[int((g-1)&1)*half:][:half], e.keep[int(g&1)*half:][:half]
	}
	for i, v := range idx[:live] {
		if v < 0 || int(v) >= len(e.where) {
			c.failf("ids[%d] = %d outside the %d rows", i, v, len(e.where))
			return
		}
		w := e.where[v]
		if w >= 0 {
			row := c.heldRow(e, w, dim)
			if row == nil {
				return
			}
			copy(os[i*dim:(i+1)*dim], row)
			counts[backend.ExchangeOwn]++
			continue
		}
		if e.keep != nil {
			if s := int(e.slot[v]); e.tag[v] == g-1 && s >= 0 && s < x.KeepRows {
				row := prev[s*dim : (s+1)*dim]
				copy(os[i*dim:(i+1)*dim], row)
				if i < x.KeepRows {
					copy(cur[i*dim:(i+1)*dim], row)
				}
				counts[backend.ExchangeReused]++
				continue
			}
		}
		p := int(-w - 1)
		if p >= x.Ranks || p == x.Rank {
			c.failf("x.Where[%d] = %d: rank %d of %d (this is rank %d)", v, w, p, x.Ranks, x.Rank)
			return
		}
		if p/x.PerHost == x.Rank/x.PerHost {
			counts[backend.ExchangeHost]++
		} else {
			counts[backend.ExchangeOther]++
		}
		k := int(e.ask[p*(ch+1)])
		e.ask[p*(ch+1)]++
		if e.need != nil {
			e.need[0] = max(e.need[0], int32(k+1))
			e.need[1] = max(e.need[1], int32(k+1))
		}
		if k >= ch {
			counts[backend.ExchangeOverflow]++
			if e.keep != nil && i < x.KeepRows {
				e.tag[v] = backend.ExchangeLost
			}
			continue
		}
		e.ask[p*(ch+1)+1+k] = v
		e.pos[p*ch+k] = int32(i)
	}
	for k, v := range e.stats {
		e.stats[k] = v + counts[k]
	}
}

// ExchangeServe writes the rows the peers asked for (see
// backend.Exchanger).
func (b *Backend) ExchangeServe(x *backend.Exchange) {
	c := b.begin("ExchangeServe")
	defer c.end()
	e := c.exchange(x)
	if !c.ok {
		return
	}
	dim, ch := x.Dim, x.Chunk
	for p := range x.Ranks {
		m := min(max(int(e.asked[p*(ch+1)]), 0), ch)
		for k, v := range e.asked[p*(ch+1)+1:][:m] {
			if v < 0 || int(v) >= len(e.where) || e.where[v] < 0 {
				c.failf("rank %d asks for the row of vertex %d, which rank %d does not hold", p, v, x.Rank)
				return
			}
			row := c.heldRow(e, e.where[v], dim)
			if row == nil {
				return
			}
			copy(e.reply[(p*ch+k)*dim:][:dim], row)
		}
	}
}

// ExchangeTake places the rows the peers sent and keeps the rows not held
// here (see backend.Exchanger).
func (b *Backend) ExchangeTake(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	c := b.begin("ExchangeTake")
	defer c.end()
	e, live, idx, os := c.exchangeRows(x, ids, n, out)
	if !c.ok {
		return
	}
	dim, ch := x.Dim, x.Chunk
	var cur []float32
	if e.keep != nil {
		half := x.KeepRows * dim
		cur = e.keep[int(e.gen[0]&1)*half:][:half]
	}
	for p := range x.Ranks {
		m := min(max(int(e.ask[p*(ch+1)]), 0), ch)
		for k, i := range e.pos[p*ch:][:m] {
			if i < 0 || int(i) >= live {
				c.failf("x.Pos[%d] = %d outside the %d live rows", p*ch+k, i, live)
				return
			}
			row := e.got[(p*ch+k)*dim:][:dim]
			copy(os[int(i)*dim:][:dim], row)
			if int(i) < x.KeepRows && cur != nil {
				copy(cur[int(i)*dim:][:dim], row)
			}
		}
	}
	if e.keep == nil {
		return
	}
	g := e.gen[0]
	for i, v := range idx[:min(live, x.KeepRows)] {
		switch {
		case v < 0 || int(v) >= len(e.where) || e.where[v] >= 0:
		case e.tag[v] == backend.ExchangeLost:
			e.tag[v] = math.MinInt32
		default:
			e.tag[v], e.slot[v] = g, int32(i)
		}
	}
	e.gen[0]++
}
