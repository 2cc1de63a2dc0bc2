package featstore

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// Exchanged serves rows spread over the ranks of a job, which may live in
// other processes and on other hosts (Layout): each rank holds its own
// rows and the replicated ones, and fetches every other row from the rank
// that holds it through its Collective's AllToAll (NCCL between GPUs, MPI
// between CPU processes). A gather is a fixed sequence of backend ops and
// two all-to-alls (backend.Exchanger) whose sizes are static: each rank
// asks each peer for at most Chunk rows. Until SizeChunks sets it, Chunk
// is the gather's capacity (the bottom block's sources), so a gather never
// overflows its chunks; a driver that knows the batches sets it tighter
// (Asks counts what a batch asks of one peer), flags a gather that asked
// more (FlagOverflow), grows the chunks and gathers again. Rows the
// gather before kept are not asked for again.
//
// Every rank must gather in lockstep, with the same chunks: the
// all-to-alls are collectives. The train package keeps a group's
// envelopes and chunks equal for that (the replay driver agrees on its
// capacities and chunks).
type Exchanged struct {
	be     backend.Backend
	xb     backend.Exchanger
	coll   backend.Collective
	x      backend.Exchange
	reuse  bool
	rows   int64
	held   int // rows this rank holds
	owner  []int32
	rep    map[int32]bool   // the replicated vertices (held here whoever owns them)
	chunks []backend.Buffer // Ask, Pos, Asked, Reply, Got
	kept   []backend.Buffer // Keep, Tag, Slot, Gen
	fixed  bool             // SizeChunks set the chunks: they no longer follow the capacity
	err    error            // a failed growth: the gathers are off

	mu    sync.Mutex
	final *ExchangeCounts // the counters as Free read them
	ferr  error
}

// NewExchanged holds this rank's rows of the [N, dim] table feat
// (l.Held(rank)) on be as float32 and serves the table through coll (rank
// coll.Rank() of l.Ranks). feat is []float32, or []uint16 bfloat16 bits
// (the held rows are widened as they are copied). With reuse, each gather
// keeps the rows it did not hold for the next.
func NewExchanged(be backend.Backend, coll backend.Collective, feat any, dim int, l *Layout, reuse bool) (*Exchanged, error) {
	xb := backend.ExchangerOf(be)
	if xb == nil {
		return nil, fmt.Errorf("featstore: %s cannot exchange rows with other ranks", be.Name())
	}
	t, err := tableOf(feat, dim)
	if err != nil {
		return nil, err
	}
	if t.rows != int64(len(l.Owner)) {
		return nil, fmt.Errorf("featstore: %d rows of width %d, the layout has %d", t.rows, dim, len(l.Owner))
	}
	rank := coll.Rank()
	if coll.Size() != l.Ranks {
		return nil, fmt.Errorf("featstore: the rows are placed over %d ranks, the group has %d", l.Ranks, coll.Size())
	}
	where, held := l.Where(rank)
	rows := t.hostRows(backend.F32, len(held), func(i int) int64 { return int64(held[i]) }).([]float32)
	if len(rows) == 0 {
		rows = make([]float32, dim) // a rank holding nothing still passes a buffer
	}
	s := &Exchanged{be: be, xb: xb, coll: coll, reuse: reuse, rows: int64(len(where)), held: len(held),
		owner: l.Owner, rep: map[int32]bool{},
		x: backend.Exchange{Ranks: l.Ranks, Rank: rank, PerHost: l.PerHost, Dim: dim}}
	for _, v := range l.Replicated {
		s.rep[v] = true
	}
	for _, u := range []struct {
		dst  *backend.Buffer
		data any
	}{{&s.x.Where, where}, {&s.x.Held, rows}, {&s.x.Stats, make([]int64, backend.ExchangeStats)}, {&s.x.Need, make([]int32, 2)}} {
		b, err := be.Upload(u.data)
		if err != nil {
			s.Free()
			return nil, fmt.Errorf("featstore: exchanged rows: %w", err)
		}
		*u.dst = b
	}
	return s, nil
}

// Remote: rows come from other ranks.
func (s *Exchanged) Remote() bool { return true }

func (s *Exchanged) Dim() int    { return s.x.Dim }
func (s *Exchanged) Rows() int64 { return s.rows }

// Gather issues the exchange. A capacity above the chunks' (the first
// gather, or a grown envelope, while SizeChunks has not set them) or above
// the kept rows' first re-sizes them: that allocates, so it happens in an
// eager gather, never in a capture (the replay driver's warm-up step
// gathers before it captures).
func (s *Exchanged) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	if s.err == nil {
		s.fail(s.fit(n.Cap))
	}
	if s.err != nil {
		return
	}
	x := s.x // the ops (and a recording of them) hold this gather's copy
	s.xb.ExchangeAsk(&x, ids, n, out)
	s.coll.AllToAll(x.Ask, x.Asked, x.Chunk+1)
	s.xb.ExchangeServe(&x)
	s.coll.AllToAll(x.Reply, x.Got, x.Chunk*x.Dim)
	s.xb.ExchangeTake(&x, ids, n, out)
}

// fail turns the gathers off after err (nil: nothing) and aborts the
// group: the peers would wait for this rank's all-to-alls.
func (s *Exchanged) fail(err error) {
	if err == nil {
		return
	}
	s.err = err
	if a, ok := s.coll.(interface{ Abort(error) }); ok {
		a.Abort(err)
	}
}

// fit sizes the chunks (while they follow the capacity) and the kept rows
// for a gather of capacity rows.
func (s *Exchanged) fit(capacity int) error {
	if s.x.Ask == nil || (!s.fixed && capacity > s.x.Chunk) {
		if err := s.allocChunks(max(capacity, s.x.Chunk)); err != nil {
			return err
		}
	}
	if s.reuse && (s.x.Keep == nil || capacity > s.x.KeepRows) {
		return s.allocKept(capacity)
	}
	return nil
}

// Err is a failure to size the chunks, after which the store gathers
// nothing.
func (s *Exchanged) Err() error { return s.err }

// Chunk is the rows a gather asks of one peer at most (0 before the first
// gather or SizeChunks).
func (s *Exchanged) Chunk() int { return s.x.Chunk }

// SizeChunks makes every chunk hold rows rows from now on, whatever the
// gathers' capacity; a gather asking more of a peer is flagged by
// FlagOverflow and leaves the rows past the chunk unwritten. It allocates,
// so it must not run inside a capture, and every rank of the group must
// size its chunks alike.
func (s *Exchanged) SizeChunks(rows int) error {
	if s.err != nil {
		return s.err
	}
	s.fixed = true
	if rows = max(rows, 1); rows != s.x.Chunk || s.x.Ask == nil {
		if err := s.allocChunks(rows); err != nil {
			s.fail(err)
			return err
		}
	}
	return nil
}

// FlagOverflow issues, after a Gather, the check that it asked no peer for
// more rows than a chunk holds; otherwise it sets flag (I32 [3], the
// replay driver's) to {1, epoch, step} from clock, as backend.FlagOverflow.
func (s *Exchanged) FlagOverflow(clock, flag backend.Buffer) {
	if s.err == nil && s.x.Ask != nil {
		s.be.FlagOverflow(backend.Count{Buf: s.x.Need, Cap: s.x.Chunk}, clock, flag)
	}
}

// Need reads back the most rows the last gather asked of one peer and the
// most any gather did since the last clear; with clear, the latter starts
// anew.
func (s *Exchanged) Need(clear bool) (last, most int, err error) {
	n := make([]int32, 2)
	s.be.Read(n, s.x.Need, 0)
	if err := s.be.Sync(); err != nil {
		return 0, 0, err
	}
	if clear {
		s.be.Write(s.x.Need, 1, []int32{0})
	}
	return int(n[0]), int(n[1]), nil
}

// Asks counts on the host the most rows a gather of ids (a batch's live
// bottom sources) asks of one peer, when the gather before it was of prev
// (nil: none, or reuse off), whose rows it then finds kept.
func (s *Exchanged) Asks(ids, prev []int32) int {
	kept := map[int32]bool{}
	if s.reuse {
		for _, v := range prev {
			kept[v] = true
		}
	}
	per := make([]int, s.x.Ranks)
	most := 0
	for _, v := range ids {
		if p := s.owner[v]; int(p) != s.x.Rank && !s.rep[v] && !kept[v] {
			per[p]++
			most = max(most, per[p])
		}
	}
	return most
}

// allocChunks re-allocates the chunks for chunk rows per peer.
func (s *Exchanged) allocChunks(chunk int) error {
	x := &s.x
	r, d := x.Ranks, x.Dim
	err := s.alloc(&s.chunks, []alloc{{&x.Ask, backend.I32, r * (chunk + 1)}, {&x.Pos, backend.I32, r * chunk},
		{&x.Asked, backend.I32, r * (chunk + 1)}, {&x.Reply, backend.F32, r * chunk * d}, {&x.Got, backend.F32, r * chunk * d}})
	if err != nil {
		return fmt.Errorf("featstore: chunks of %d rows for %d ranks: %w", chunk, r, err)
	}
	x.Chunk = chunk
	s.be.Fill(x.Ask, 0)
	s.be.Fill(x.Asked, 0)
	return nil
}

// allocKept re-allocates the kept rows for gathers of up to rows rows;
// the rows kept so far are forgotten.
func (s *Exchanged) allocKept(rows int) error {
	x := &s.x
	err := s.alloc(&s.kept, []alloc{{&x.Keep, backend.F32, 2 * rows * x.Dim}, {&x.Tag, backend.I32, int(s.rows)},
		{&x.Slot, backend.I32, int(s.rows)}, {&x.Gen, backend.I32, 1}})
	if err != nil {
		return fmt.Errorf("featstore: %d kept rows: %w", rows, err)
	}
	x.KeepRows = rows
	s.be.Fill(x.Tag, math.MinInt32)
	s.be.Fill(x.Gen, 0)
	return nil
}

// alloc is one buffer for the exchange.
type alloc struct {
	dst *backend.Buffer
	dt  backend.DType
	n   int
}

// alloc frees the buffers in *bufs and allocates as, recording them there.
func (s *Exchanged) alloc(bufs *[]backend.Buffer, as []alloc) error {
	for _, b := range *bufs {
		s.be.Free(b)
	}
	*bufs = (*bufs)[:0]
	for _, a := range as {
		*a.dst = nil
	}
	for _, a := range as {
		b, err := s.be.Alloc(a.dt, max(a.n, 1))
		if err != nil {
			return err
		}
		*bufs = append(*bufs, b)
		*a.dst = b
	}
	return nil
}

// DeviceBytes counts the rows held, the table and the chunks.
func (s *Exchanged) DeviceBytes() int64 {
	var n int64 = 4*int64(s.held)*int64(s.x.Dim) + 4*s.rows + 8*backend.ExchangeStats + 8
	for _, b := range append(s.chunks, s.kept...) {
		n += int64(b.Len()) * int64(b.DType().Size())
	}
	return n
}

// ExchangeCounts are the rows a rank's gathers took, by where they came
// from, and what the exchange put on the wire.
type ExchangeCounts struct {
	Own       int64 `json:"own"`        // rows held by the rank
	Host      int64 `json:"same_host"`  // rows asked of a rank of the same host
	Other     int64 `json:"other_host"` // rows asked of a rank of another host
	Reused    int64 `json:"reused"`     // rows kept from the gather before
	Overflow  int64 `json:"overflow,omitempty"`
	Gathers   int64 `json:"gathers"`
	ChunkRows int64 `json:"chunk_rows"` // the chunks' rows, per peer, summed over gathers
	// The bytes a row takes on the wire (its id asked, its values sent
	// back), and the peers of each level per rank, summed over ranks.
	RowBytes              int64 `json:"row_bytes"`
	HostPeers, OtherPeers int64 `json:"-"`
	Ranks                 int64 `json:"ranks"` // whose counters were added
}

// Plus adds the counters of another rank.
func (c ExchangeCounts) Plus(o ExchangeCounts) ExchangeCounts {
	return ExchangeCounts{Own: c.Own + o.Own, Host: c.Host + o.Host, Other: c.Other + o.Other, Reused: c.Reused + o.Reused,
		Overflow: c.Overflow + o.Overflow, Gathers: max(c.Gathers, o.Gathers), ChunkRows: c.ChunkRows + o.ChunkRows,
		RowBytes: max(c.RowBytes, o.RowBytes), HostPeers: c.HostPeers + o.HostPeers, OtherPeers: c.OtherPeers + o.OtherPeers,
		Ranks: c.Ranks + o.Ranks}
}

// LiveBytes are the bytes of the rows asked for, to and from ranks of the
// same host and of other hosts.
func (c ExchangeCounts) LiveBytes() (host, other int64) {
	return c.Host * c.RowBytes, c.Other * c.RowBytes
}

// WireBytes are the bytes the chunks put on the wire (every peer's whole
// chunk, used or not; the 4-byte count of each chunk aside).
func (c ExchangeCounts) WireBytes() (host, other int64) {
	if c.Ranks == 0 {
		return 0, 0
	}
	// Every rank gathers in lockstep with the same chunks, and sends one
	// chunk to each of its peers per gather.
	perRank := c.ChunkRows / c.Ranks * c.RowBytes
	return perRank * c.HostPeers, perRank * c.OtherPeers
}

// Counts are the counters since the store was made; after Free, as Free
// found them.
func (s *Exchanged) Counts() (ExchangeCounts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final != nil || s.ferr != nil {
		if s.final == nil {
			return ExchangeCounts{}, s.ferr
		}
		return *s.final, s.ferr
	}
	if s.x.Stats == nil {
		return ExchangeCounts{}, errors.New("featstore: the exchanged store is freed")
	}
	return s.read()
}

// read reads the counters (s.mu held).
func (s *Exchanged) read() (ExchangeCounts, error) {
	c := make([]int64, backend.ExchangeStats)
	s.be.Read(c, s.x.Stats, 0)
	if err := s.be.Sync(); err != nil {
		return ExchangeCounts{}, err
	}
	hostPeers := int64(s.x.PerHost - 1)
	return ExchangeCounts{Own: c[backend.ExchangeOwn], Host: c[backend.ExchangeHost], Other: c[backend.ExchangeOther],
		Reused: c[backend.ExchangeReused], Overflow: c[backend.ExchangeOverflow], Gathers: c[backend.ExchangeGathers],
		ChunkRows: c[backend.ExchangeChunk], RowBytes: 4 + 4*int64(s.x.Dim),
		HostPeers: hostPeers, OtherPeers: int64(s.x.Ranks) - 1 - hostPeers, Ranks: 1}, nil
}

// Free reads the counters one last time and releases what the store
// allocated.
func (s *Exchanged) Free() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.x.Stats != nil {
		c, err := s.read()
		if err != nil {
			s.ferr = fmt.Errorf("featstore: exchanged rows' counters: %w", err)
		} else {
			s.final = &c
		}
	}
	for _, b := range append(append(s.chunks, s.kept...), s.x.Where, s.x.Held, s.x.Stats, s.x.Need) {
		if b != nil {
			s.be.Free(b)
		}
	}
	s.chunks, s.kept = nil, nil
	s.x.Where, s.x.Held, s.x.Stats, s.x.Need = nil, nil, nil, nil
}
