package featstore

import (
	"errors"
	"fmt"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// Sharded serves rows spread over the memories of a group's backends
// (backend.PeerRows): each backend of the group holds some rows (its
// shard, made with UploadShard), and a rank's store gathers every row
// where it lives, its own memory or a peer's, read in place, through a
// per-vertex table. The gather is one backend op (GatherRows) that counts
// the rows by where they lived (local, replica, remote) on the device.
//
// The store does not own the shards, which its peers read as long as they
// gather: whoever made them frees them (backend.PeerRows.FreeRows) once
// every rank is done. Free keeps the counters, so they can be read after
// the trainer that owned the store is closed.
type Sharded struct {
	be    backend.Backend
	pr    backend.PeerRows
	table backend.RowTable
	stats backend.Buffer // I64 [4]: rows gathered by kind, then remote rows reused
	keep  int            // KeepRows asked for (0: no reuse); kept is set once it is done
	kept  bool
	// keepBytes is what KeepRows holds: two halves of rows, a tag and a
	// slot per vertex.
	keepBytes int64
	dim       int
	rows      int64
	own       int64 // bytes of the shard on this backend

	mu    sync.Mutex
	final *backend.ReadCounts // the counters as Free read them
	err   error               // Free's failure to read them
}

// UploadShard makes the rows ids of the [N, dim] table feat resident on
// be as float32, a shard for NewSharded (shards hold float32 rows only).
// A table held as bfloat16 bits ([]uint16, a bfloat16 dataset's) has the
// rows widened first, in a host copy of the shard's rows (4 bytes a
// value) that lives while the shard is uploaded.
func UploadShard(be backend.Backend, feat any, dim int, ids []int32) (backend.Rows, error) {
	pr := backend.PeerRowsOf(be)
	if pr == nil {
		return nil, fmt.Errorf("featstore: %s cannot gather rows spread over devices", be.Name())
	}
	if _, ok := feat.([]uint16); ok {
		t, err := tableOf(feat, dim)
		if err == nil {
			feat, ids, err = widenRows(t, ids)
		}
		if err != nil {
			return nil, err
		}
	}
	r, err := pr.UploadRows(feat, dim, ids)
	if err != nil {
		return nil, fmt.Errorf("featstore: shard of %d rows: %w", len(ids), err)
	}
	return r, nil
}

// NewSharded serves a table of numRows vertices in which vertex v's row
// is row index[v] of shards[at[v]] (made on be or on a peer of its group),
// counted under kind[v] (backend.RowLocal, RowReplica, RowRemote). own is
// the shard of shards that lives on be (its bytes count in DeviceBytes),
// or -1.
func NewSharded(be backend.Backend, numRows int64, shards []backend.Rows, own int, at, index []int32, kind []uint8) (*Sharded, error) {
	pr := backend.PeerRowsOf(be)
	if pr == nil {
		return nil, fmt.Errorf("featstore: %s cannot gather rows spread over devices", be.Name())
	}
	t, err := pr.RowTable(numRows, shards, at, index, kind)
	if err != nil {
		return nil, fmt.Errorf("featstore: sharded rows: %w", err)
	}
	s := &Sharded{be: be, pr: pr, table: t, dim: t.Dim(), rows: numRows}
	if own >= 0 && own < len(shards) {
		s.own = int64(shards[own].Rows()) * int64(s.dim) * 4
	}
	if s.stats, err = be.Alloc(backend.I64, 4); err != nil {
		pr.FreeRowTable(t)
		return nil, fmt.Errorf("featstore: sharded rows' counters: %w", err)
	}
	return s, nil
}

func (s *Sharded) Dim() int    { return s.dim }
func (s *Sharded) Rows() int64 { return s.rows }

// Keep makes the store keep the remote rows of each gather, up to rows of
// them, for the next gather (backend.PeerRows.KeepRows): rows that two
// consecutive batches share are read from the peer once. It allocates, so
// call it outside a capture (the replay driver's BeforeCapture); a store
// asked for reuse with rows 0 keeps as many rows as its first gather has
// (eager drivers).
func (s *Sharded) Keep(rows int) error {
	s.keep = max(rows, 1)
	if rows <= 0 {
		return nil
	}
	s.kept = true
	if err := s.pr.KeepRows(s.table, rows); err != nil {
		return fmt.Errorf("featstore: keeping %d rows for reuse: %w", rows, err)
	}
	s.keepBytes = 8*int64(rows)*int64(s.dim) + 8*s.rows
	return nil
}

// Gather issues the gather through the table, counting rows by kind (and
// rows reused, when the store keeps rows).
func (s *Sharded) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	if s.keep > 0 && !s.kept {
		s.kept = true
		if err := s.pr.KeepRows(s.table, n.Cap); err != nil {
			s.keep = 0 // reuse off; the rows are read from the peers as before
		} else {
			s.keepBytes = 8*int64(n.Cap)*int64(s.dim) + 8*s.rows
		}
	}
	s.pr.GatherRows(s.table, ids, n, out, s.stats)
}

// DeviceBytes counts this backend's shard, the table (an address and a
// kind per vertex) and the counters.
func (s *Sharded) DeviceBytes() int64 { return s.own + 9*s.rows + 32 + s.keepBytes }

// Stats are the rows gathered, by where they lived, since the store was
// made or the counters reset; after Free, the counters as Free found them.
func (s *Sharded) Stats() (backend.ReadCounts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final != nil || s.err != nil {
		return *orZero(s.final), s.err
	}
	if s.stats == nil {
		return backend.ReadCounts{}, errors.New("featstore: the sharded store is freed")
	}
	return s.read()
}

func orZero(c *backend.ReadCounts) *backend.ReadCounts {
	if c == nil {
		return &backend.ReadCounts{}
	}
	return c
}

// read reads the counters (s.mu held).
func (s *Sharded) read() (backend.ReadCounts, error) {
	c := make([]int64, 4)
	s.be.Read(c, s.stats, 0)
	if err := s.be.Sync(); err != nil {
		return backend.ReadCounts{}, err
	}
	return backend.ReadCounts{Local: c[backend.RowLocal], Replica: c[backend.RowReplica], Remote: c[backend.RowRemote], Reused: c[3]}, nil
}

// ResetStats zeroes the counters.
func (s *Sharded) ResetStats() { s.be.Write(s.stats, 0, []int64{0, 0, 0, 0}) }

// Free reads the counters one last time and releases the table and the
// counters (not the shards).
func (s *Sharded) Free() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats == nil {
		return
	}
	c, err := s.read()
	if err != nil {
		s.err = fmt.Errorf("featstore: sharded rows' counters: %w", err)
	} else {
		s.final = &c
	}
	s.be.Free(s.stats)
	s.pr.FreeRowTable(s.table)
	s.stats, s.table = nil, nil
}
