package record

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// The wrapper has backend.PeerRows when the backend inside has it
// (backend.PeerRowsOf): uploads and tables are made by the inner backend
// (not during a capture), and GatherRows is an op, recorded like any other.
var _ backend.PeerRows = (*Backend)(nil)

func (b *Backend) peerRows(op string) (backend.PeerRows, error) {
	if p := backend.PeerRowsOf(b.inner); p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("record: %s: %s cannot gather rows spread over devices", op, b.inner.Name())
}

// UploadRows forwards; during a capture it fails.
func (b *Backend) UploadRows(table any, dim int, ids []int32) (backend.Rows, error) {
	if err := b.refuse("UploadRows"); err != nil {
		return nil, err
	}
	p, err := b.peerRows("UploadRows")
	if err != nil {
		return nil, err
	}
	return p.UploadRows(table, dim, ids)
}

// RowTable forwards; during a capture it fails.
func (b *Backend) RowTable(numRows int64, rows []backend.Rows, at, index []int32, kind []uint8) (backend.RowTable, error) {
	if err := b.refuse("RowTable"); err != nil {
		return nil, err
	}
	p, err := b.peerRows("RowTable")
	if err != nil {
		return nil, err
	}
	return p.RowTable(numRows, rows, at, index, kind)
}

func (b *Backend) GatherRows(t backend.RowTable, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	b.do(func() {
		p, err := b.peerRows("GatherRows")
		if err != nil {
			b.mu.Lock()
			b.fail(err)
			b.mu.Unlock()
			return
		}
		p.GatherRows(t, ids, n, out, stats)
	})
}

// FreeRows forwards; during a capture it is a sticky error and frees
// nothing.
func (b *Backend) FreeRows(r backend.Rows) {
	if b.refuse("FreeRows") == nil {
		if p, err := b.peerRows("FreeRows"); err == nil {
			p.FreeRows(r)
		}
	}
}

// FreeRowTable forwards; during a capture it is a sticky error and frees
// nothing.
func (b *Backend) FreeRowTable(t backend.RowTable) {
	if b.refuse("FreeRowTable") == nil {
		if p, err := b.peerRows("FreeRowTable"); err == nil {
			p.FreeRowTable(t)
		}
	}
}

// KeepRows forwards to the inner backend (it allocates: not while
// capturing).
func (b *Backend) KeepRows(t backend.RowTable, rows int) error {
	if err := b.refuse("KeepRows"); err != nil {
		return err
	}
	p, err := b.peerRows("KeepRows")
	if err != nil {
		return err
	}
	return p.KeepRows(t, rows)
}
