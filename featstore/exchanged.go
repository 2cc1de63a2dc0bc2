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
// asks each peer for at most Chunk rows, and Chunk is the gather's
// capacity (the bottom block's sources), so a gather never overflows its
// chunks. Rows the gather before kept are not asked for again.
//
// Every rank must gather in lockstep, with the same capacity: the
// all-to-alls are collectives. The train package keeps a group's
// envelopes equal for that (the replay driver agrees on its capacities).
type Exchanged struct {
	be    backend.Backend
	xb    backend.Exchanger
	coll  backend.Collective
	x     backend.Exchange
	reuse bool
	rows  int64
	held  int // rows this rank holds
	bufs  []backend.Buffer
	err   error // a failed growth: the gathers are off

	mu    sync.Mutex
	final *ExchangeCounts // the counters as Free read them
	ferr  error
}

// NewExchanged holds this rank's rows of the [N, dim] float32 table feat
// (l.Held(rank)) on be and serves the table through coll (rank
// coll.Rank() of l.Ranks). With reuse, each gather keeps the rows it did
// not hold for the next.
func NewExchanged(be backend.Backend, coll backend.Collective, feat []float32, dim int, l *Layout, reuse bool) (*Exchanged, error) {
	xb := backend.ExchangerOf(be)
	if xb == nil {
		return nil, fmt.Errorf("featstore: %s cannot exchange rows with other ranks", be.Name())
	}
	if dim <= 0 || len(feat)%dim != 0 || int64(len(feat)/dim) != int64(len(l.Owner)) {
		return nil, fmt.Errorf("featstore: %d values are not %d rows of width %d", len(feat), len(l.Owner), dim)
	}
	rank := coll.Rank()
	if coll.Size() != l.Ranks {
		return nil, fmt.Errorf("featstore: the rows are placed over %d ranks, the group has %d", l.Ranks, coll.Size())
	}
	where, held := l.Where(rank)
	rows := make([]float32, 0, len(held)*dim)
	for _, v := range held {
		rows = append(rows, feat[int(v)*dim:int(v+1)*dim]...)
	}
	if len(rows) == 0 {
		rows = make([]float32, dim) // a rank holding nothing still passes a buffer
	}
	s := &Exchanged{be: be, xb: xb, coll: coll, reuse: reuse, rows: int64(len(where)), held: len(held),
		x: backend.Exchange{Ranks: l.Ranks, Rank: rank, PerHost: l.PerHost, Dim: dim}}
	for _, u := range []struct {
		dst  *backend.Buffer
		data any
	}{{&s.x.Where, where}, {&s.x.Held, rows}, {&s.x.Stats, make([]int64, backend.ExchangeStats)}} {
		b, err := be.Upload(u.data)
		if err != nil {
			s.Free()
			return nil, fmt.Errorf("featstore: exchanged rows: %w", err)
		}
		*u.dst = b
	}
	return s, nil
}

func (s *Exchanged) Dim() int    { return s.x.Dim }
func (s *Exchanged) Rows() int64 { return s.rows }

// Gather issues the exchange. A capacity above the chunks' (the first
// gather, or a grown envelope) first re-sizes them: that allocates, so it
// happens in an eager gather, never in a capture (the replay driver's
// warm-up step gathers before it captures).
func (s *Exchanged) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	if s.err == nil && (s.x.Ask == nil || n.Cap > s.x.Chunk) {
		if err := s.grow(n.Cap); err != nil {
			s.err = err
			if a, ok := s.coll.(interface{ Abort(error) }); ok {
				a.Abort(err) // the peers would wait for this rank's all-to-alls
			}
		}
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

// Err is a failure to size the chunks, after which the store gathers
// nothing.
func (s *Exchanged) Err() error { return s.err }

// grow re-allocates the chunks (and the kept rows) for gathers of chunk
// rows; the kept rows are forgotten.
func (s *Exchanged) grow(chunk int) error {
	for _, b := range s.bufs {
		s.be.Free(b)
	}
	s.bufs = nil
	x := &s.x
	r, d := x.Ranks, x.Dim
	allocs := []struct {
		dst *backend.Buffer
		dt  backend.DType
		n   int
	}{{&x.Ask, backend.I32, r * (chunk + 1)}, {&x.Pos, backend.I32, r * chunk}, {&x.Asked, backend.I32, r * (chunk + 1)},
		{&x.Reply, backend.F32, r * chunk * d}, {&x.Got, backend.F32, r * chunk * d}}
	if s.reuse {
		allocs = append(allocs, []struct {
			dst *backend.Buffer
			dt  backend.DType
			n   int
		}{{&x.Keep, backend.F32, 2 * chunk * d}, {&x.Tag, backend.I32, int(s.rows)}, {&x.Slot, backend.I32, int(s.rows)}, {&x.Gen, backend.I32, 1}}...)
	}
	for _, a := range allocs {
		b, err := s.be.Alloc(a.dt, max(a.n, 1))
		if err != nil {
			return fmt.Errorf("featstore: chunks of %d rows for %d ranks: %w", chunk, r, err)
		}
		s.bufs = append(s.bufs, b)
		*a.dst = b
	}
	x.Chunk = chunk
	s.be.Fill(x.Ask, 0)
	s.be.Fill(x.Asked, 0)
	if s.reuse {
		x.KeepRows = chunk
		s.be.Fill(x.Tag, math.MinInt32)
		s.be.Fill(x.Gen, 0)
	}
	return nil
}

// DeviceBytes counts the rows held, the table and the chunks.
func (s *Exchanged) DeviceBytes() int64 {
	var n int64 = 4*int64(s.held)*int64(s.x.Dim) + 4*s.rows + 8*backend.ExchangeStats
	for _, b := range s.bufs {
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

// WireBytes are the bytes the fixed chunks put on the wire (every peer's
// whole chunk, used or not; the 4-byte count of each chunk aside).
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
	for _, b := range append(s.bufs, s.x.Where, s.x.Held, s.x.Stats) {
		if b != nil {
			s.be.Free(b)
		}
	}
	s.bufs = nil
	s.x.Where, s.x.Held, s.x.Stats = nil, nil, nil
}
