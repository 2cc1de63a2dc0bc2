package backend

import (
	"fmt"
	"math"
)

// Exchange is one rank's state for exchanging feature rows with the other
// ranks of a group through a Collective's AllToAll (featstore.Exchanged):
// the rows this rank holds, a per-vertex table saying where every other
// row is to be asked for, and fixed-size chunks per peer, so that a
// gather is a fixed sequence of ops and collectives that a capture
// records. Every buffer belongs to the rank's backend; the caller
// allocates them (their sizes are given below).
//
// A gather is ExchangeAsk, AllToAll(Ask, Asked, Chunk+1),
// ExchangeServe, AllToAll(Reply, Got, Chunk*Dim), ExchangeTake.
//
// Chunk may be below what a gather asks of a peer: the rows past it are
// left unwritten and counted, Need says how many rows the chunk would have
// needed (so that the caller can flag the gather, grow the chunks and
// gather again), and such rows are not kept for reuse.
type Exchange struct {
	Ranks   int // ranks in the group
	Rank    int // this rank
	PerHost int // ranks per host: ranks r and p share a host when r/PerHost == p/PerHost
	Chunk   int // rows asked of one peer in one gather, at most
	Dim     int // values per row

	Where Buffer // I32 [N]: >= 0, the row of Held that is v's; < 0, -(1+p): ask rank p
	Held  Buffer // F32 [rows held, Dim]
	Ask   Buffer // I32 [Ranks*(Chunk+1)]: per peer, how many rows it is asked for, then their ids
	Pos   Buffer // I32 [Ranks*Chunk]: per asked row, its row in the gather's output
	Asked Buffer // I32 [Ranks*(Chunk+1)]: per peer, what it asks of this rank (Ask's layout)
	Reply Buffer // F32 [Ranks*Chunk*Dim]: per peer, the rows it asked for
	Got   Buffer // F32 [Ranks*Chunk*Dim]: per peer, the rows it sent back

	// Reuse across gathers: with Keep set, the rows a gather did not hold
	// (asked or reused) among the first KeepRows rows of its output are
	// kept in one half of Keep, and a gather takes a row the gather before
	// it kept from there instead of asking for it again (the same bits).
	Keep     Buffer // F32 [2*KeepRows*Dim], or nil: no reuse
	KeepRows int
	Tag      Buffer // I32 [N]: the gather that kept v's row (start below any gather: math.MinInt32)
	Slot     Buffer // I32 [N]: where in its half
	Gen      Buffer // I32 [1]: gathers done (starts at 0)

	Stats Buffer // I64 [ExchangeStats], or nil: counters added to by every gather
	// Need, when set, is I32 [2]: [0] the most rows this gather asks of
	// one peer (past Chunk too; set to 0 by ExchangeAsk first), [1] the
	// most any gather asked since the caller last set it to 0.
	Need Buffer
}

// ExchangeLost tags (Exchange.Tag) a vertex whose row did not fit its
// peer's chunk in the gather under way: ExchangeTake does not keep it.
const ExchangeLost = math.MinInt32 + 1

// The counters of an Exchange (Stats), by element.
const (
	ExchangeOwn      = iota // rows this rank held
	ExchangeHost            // rows asked of a rank of the same host
	ExchangeOther           // rows asked of a rank of another host
	ExchangeReused          // rows taken from the previous gather's kept rows
	ExchangeChunk           // Chunk, once per gather: the rows each peer's chunk puts on the wire
	ExchangeOverflow        // rows that did not fit their peer's chunk (left unwritten)
	ExchangeGathers         // gathers (ExchangeAsk calls)
	ExchangeStats           // the number of counters
)

// Exchanger is implemented by backends that can exchange feature rows
// between the ranks of a group (Exchange). The ops read live counts from
// backend memory and keep every size static. Fallback when absent: every
// rank holds the whole table.
type Exchanger interface {
	// ExchangeAsk, for each live row i of ids (I32 [n.Cap]; distinct
	// vertex ids), writes out[i, :] (F32 [n.Cap, Dim]) when this rank
	// holds the row or the previous gather kept it, and otherwise appends
	// the vertex to the chunk of the rank Where names (Ask, Pos); it first
	// sets every chunk's count to zero. Rows that do not fit a chunk are
	// counted as ExchangeOverflow and left untouched (and, with Keep,
	// tagged ExchangeLost). It counts the rows by level in Stats and the
	// most rows asked of one peer in Need.
	ExchangeAsk(x *Exchange, ids Buffer, n Count, out Buffer)
	// ExchangeServe writes, for every peer's chunk of Asked, the rows it
	// asks for into Reply (they must be held here).
	ExchangeServe(x *Exchange)
	// ExchangeTake writes the rows of Got into out at the places Pos
	// recorded, keeps the rows not held here among the first KeepRows
	// (but those tagged ExchangeLost, whose tag it clears), and advances
	// Gen (with Keep).
	ExchangeTake(x *Exchange, ids Buffer, n Count, out Buffer)
}

// ExchangerOf is be's Exchanger, or nil when be (or the backend a wrapper
// forwards to) has none. It is be's own, so that a wrapper records or
// times the ops.
func ExchangerOf(be Backend) Exchanger {
	x, _ := ownCapability[Exchanger](be)
	return x
}

// ownCapability is be's capability T when the backend at the bottom of
// its wrappers has it (a wrapper that forwards T has it whatever is
// inside), and false otherwise.
func ownCapability[T any](be Backend) (T, bool) {
	var none T
	if _, ok := bottom(be).(T); !ok {
		return none, false
	}
	x, ok := be.(T)
	return x, ok
}

// Check describes the first of x's sizes that no backend can serve (nil
// when every one is usable): ranks, ranks per host and row width in [1,
// 2^31), this rank among the ranks, chunks and kept rows not negative.
func (x *Exchange) Check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"x.Ranks", x.Ranks}, {"x.PerHost", x.PerHost}, {"x.Dim", x.Dim}} {
		if f.v <= 0 || f.v > math.MaxInt32 {
			return fmt.Errorf("%s: %d, want in [1, 2^31)", f.name, f.v)
		}
	}
	if x.Chunk < 0 || x.Rank < 0 || x.Rank >= x.Ranks || x.KeepRows < 0 {
		return fmt.Errorf("x: rank %d of %d, chunk %d, %d rows kept", x.Rank, x.Ranks, x.Chunk, x.KeepRows)
	}
	return nil
}
