package profile

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// The wrapper has backend.PeerRows when the backend inside has it
// (backend.PeerRowsOf): uploads, tables and frees forward untimed, and
// GatherRows is timed as an op.
var _ backend.PeerRows = (*Backend)(nil)

func (b *Backend) peerRows(op string) (backend.PeerRows, error) {
	if p := backend.PeerRowsOf(b.inner); p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("profile: %s: %s cannot gather rows spread over devices", op, b.inner.Name())
}

func (b *Backend) UploadRows(table any, dim int, ids []int32) (backend.Rows, error) {
	p, err := b.peerRows("UploadRows")
	if err != nil {
		return nil, err
	}
	return p.UploadRows(table, dim, ids)
}

func (b *Backend) RowTable(numRows int64, rows []backend.Rows, at, index []int32, kind []uint8) (backend.RowTable, error) {
	p, err := b.peerRows("RowTable")
	if err != nil {
		return nil, err
	}
	return p.RowTable(numRows, rows, at, index, kind)
}

// GatherRows is timed under its name. Without the capability inside (no
// table could have been made), the call is dropped and Err says so.
func (b *Backend) GatherRows(t backend.RowTable, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	p, err := b.peerRows("GatherRows")
	if err != nil {
		b.mu.Lock()
		b.fail(err)
		b.mu.Unlock()
		return
	}
	b.op("GatherRows", func() { p.GatherRows(t, ids, n, out, stats) })
}

func (b *Backend) FreeRows(r backend.Rows) {
	if p, err := b.peerRows("FreeRows"); err == nil {
		p.FreeRows(r)
	}
}

func (b *Backend) FreeRowTable(t backend.RowTable) {
	if p, err := b.peerRows("FreeRowTable"); err == nil {
		p.FreeRowTable(t)
	}
}

// KeepRows forwards to the inner backend.
func (b *Backend) KeepRows(t backend.RowTable, rows int) error {
	p, err := b.peerRows("KeepRows")
	if err != nil {
		return err
	}
	return p.KeepRows(t, rows)
}
