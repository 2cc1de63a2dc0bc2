package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// testExchange: one rank of four (two hosts of two) gathers rows through
// the exchange ops, the peers played by the host: every live row of every
// gather is the whole table's (bitwise), whether held, asked for or kept
// from the previous gather; the rows a peer asks for are served from the
// rank's own rows; the counters say where the rows came from, and Need the
// most rows asked of one peer. One gather asks through chunks too small:
// the rows past them are counted, left unwritten and not kept, so the next
// gather reuses only rows it got.
func testExchange(e *env) {
	xb := e.exchanger()
	const rows, ranks, perHost, rank, cp, live, keep = 90, 4, 2, 1, 40, 33, 25
	for _, dim := range []int{3, 8} {
		feat := e.randF32(rows*dim, 10)
		where := make([]int32, rows)
		var held []float32
		var heldIDs []int32
		for v := range rows {
			if p := v % ranks; p == rank {
				where[v] = int32(len(heldIDs))
				heldIDs = append(heldIDs, int32(v))
				held = append(held, feat[v*dim:(v+1)*dim]...)
			} else {
				where[v] = int32(-1 - p)
			}
		}
		x := &backend.Exchange{Ranks: ranks, Rank: rank, PerHost: perHost, Chunk: cp, Dim: dim,
			Where: e.upload(where), Held: e.upload(held),
			Ask: e.poisonI32(ranks * (cp + 1)), Pos: e.poisonI32(ranks * cp), Asked: e.poisonI32(ranks * (cp + 1)),
			Reply: e.poison(ranks * cp * dim), Got: e.poison(ranks * cp * dim),
			Keep: e.poison(2 * keep * dim), KeepRows: keep, Tag: e.alloc(backend.I32, rows, math.MinInt32),
			Slot: e.alloc(backend.I32, rows, 0), Gen: e.upload([]int32{0}), Stats: e.upload(make([]int64, backend.ExchangeStats))}
		x.Need = e.upload([]int32{0, 0})
		var want [backend.ExchangeStats]int64
		kept := map[int32]bool{}
		var peak int32
		for round := range 6 {
			what := fmt.Sprintf("Exchange dim=%d round %d", dim, round)
			// Round 4 asks through chunks of 2 rows (the same buffers): the
			// rows past them are lost (left unwritten, not kept), and the
			// next round, with whole chunks again, reuses only rows it got.
			xr := x
			if round == 4 {
				small := *x
				small.Chunk = 2
				xr = &small
			}
			ch := xr.Chunk
			overflowBefore := want[backend.ExchangeOverflow]
			ids := make([]int32, cp)
			for i, v := range e.rnd.Perm(rows)[:cp] {
				ids[i] = int32(v)
			}
			out := e.poison(cp * dim)
			idsB, n := e.upload(ids), e.count(live, cp)
			xb.ExchangeAsk(xr, idsB, n, out)
			// The peers: each serves the rows asked of it from the whole table.
			ask := e.readI32(x.Ask, ranks*(ch+1))
			got := make([]float32, ranks*ch*dim)
			asked := map[int32]bool{}
			var need int32
			for p := range ranks {
				m := int(ask[p*(ch+1)])
				if p == rank && m != 0 {
					e.t.Fatalf("%s: %d rows asked of this rank itself", what, m)
				}
				need = max(need, int32(m))
				want[backend.ExchangeOverflow] += int64(max(0, m-ch))
				for k, v := range ask[p*(ch+1)+1:][:min(m, ch)] {
					if int(v)%ranks != p || asked[v] {
						e.t.Fatalf("%s: vertex %d asked of rank %d", what, v, p)
					}
					asked[v] = true
					copy(got[(p*ch+k)*dim:][:dim], feat[int(v)*dim:][:dim])
				}
			}
			peak = max(peak, need)
			if n := e.readI32(x.Need, 2); n[0] != need || n[1] != peak {
				e.t.Fatalf("%s: need %v, want [%d %d]", what, n, need, peak)
			}
			e.be.Write(x.Got, 0, got)
			xb.ExchangeTake(xr, idsB, n, out)
			rowsOut := e.readF32(out, cp*dim)
			next := map[int32]bool{}
			lost := 0
			for i, v := range ids[:live] {
				own := int(v)%ranks == rank
				switch p := int(v) % ranks; {
				case own:
					want[backend.ExchangeOwn]++
				case kept[v]:
					want[backend.ExchangeReused]++
				case p/perHost == rank/perHost:
					want[backend.ExchangeHost]++
				default:
					want[backend.ExchangeOther]++
				}
				row := rowsOut[i*dim : (i+1)*dim]
				if !own && !kept[v] && !asked[v] {
					// Past its chunk: left unwritten and not kept.
					if !math.IsNaN(float64(row[0])) {
						e.t.Fatalf("%s: vertex %d, asked past its chunk, was written", what, v)
					}
					lost++
					continue
				}
				checkEqual(e.t, what, row, feat[int(v)*dim:(int(v)+1)*dim], dim)
				if !own && i < keep {
					next[v] = true
				}
			}
			if over := want[backend.ExchangeOverflow] - overflowBefore; int64(lost) != over || (round == 4) != (lost > 0) {
				e.t.Fatalf("%s: %d rows lost, %d did not fit their chunks", what, lost, over)
			}
			kept = next
			want[backend.ExchangeChunk] += int64(ch)
			want[backend.ExchangeGathers]++
			for i, v := range rowsOut[live*dim:] {
				if !math.IsNaN(float64(v)) {
					e.t.Fatalf("%s: value %d past the live rows written", what, live*dim+i)
				}
			}
			e.checkCounts(what, x.Stats, want[:])
		}
		if want[backend.ExchangeReused] == 0 {
			e.t.Fatalf("dim %d: no row was reused", dim)
		}
		// Serving: peer p asks for p+3 of the rows held here (none of rank 1 itself).
		asked := make([]int32, ranks*(cp+1))
		wantReply := make([]float32, ranks*cp*dim)
		for p := range ranks {
			if p == rank {
				continue
			}
			asked[p*(cp+1)] = int32(p + 3)
			for k, j := range e.rnd.Perm(len(heldIDs))[:p+3] {
				v := heldIDs[j]
				asked[p*(cp+1)+1+k] = v
				copy(wantReply[(p*cp+k)*dim:][:dim], feat[int(v)*dim:][:dim])
			}
		}
		e.be.Write(x.Asked, 0, asked)
		e.be.Write(x.Reply, 0, make([]float32, ranks*cp*dim))
		xb.ExchangeServe(x)
		checkEqual(e.t, fmt.Sprintf("ExchangeServe dim=%d", dim), e.readF32(x.Reply, ranks*cp*dim), wantReply, dim)
	}
}
