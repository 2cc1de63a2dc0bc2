package cuda

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.PeerRows = (*Backend)(nil)

// devRows are feature rows in one device's memory: F32 [rows, dim].
type devRows struct {
	owner *Backend
	buf   *buffer
	rows  int
	dim   int
}

func (r *devRows) Rows() int { return r.rows }
func (r *devRows) Dim() int  { return r.dim }

// devRowTable is the pointer table of rows spread over a group: each
// vertex's row address (in this device's memory or a peer's) and kind.
type devRowTable struct {
	owner   *Backend
	numRows int64
	dim     int
	addr    *buffer // I64 [N]
	kind    *buffer // U8 [N]
	vec     bool    // every row starts on 16 bytes and dim % 4 == 0
	// KeepRows: two halves of kept rows (F32 [2, keepRows, dim]), per
	// vertex the gather that kept its row and where (I32 [N] each), and
	// the gather counter (I32 [1]).
	keep, tag, slot, gen *buffer
	keepRows             int
}

func (t *devRowTable) NumRows() int64 { return t.numRows }
func (t *devRowTable) Dim() int       { return t.dim }

// UploadRows copies the rows ids of the [N, dim] float32 table to this
// device (see backend.PeerRows), a chunk of rows at a time, so the host
// never holds a second copy of the rank's rows.
func (b *Backend) UploadRows(table any, dim int, ids []int32) (backend.Rows, error) {
	var feat []float32
	switch t := table.(type) {
	case []float32:
		if dim <= 0 || len(t)%dim != 0 {
			return nil, fmt.Errorf("cuda: UploadRows: %d values are not rows of width %d", len(t), dim)
		}
		feat = t
	case []uint16:
		return nil, fmt.Errorf("cuda: UploadRows: a bfloat16 table cannot be spread over devices (only float32 rows); hold the features as float32 or keep the whole table on every device")
	default:
		return nil, fmt.Errorf("cuda: UploadRows: unsupported table %T (want []float32)", table)
	}
	n := len(feat) / dim
	for i, v := range ids {
		if v < 0 || int(v) >= n {
			return nil, fmt.Errorf("cuda: UploadRows: ids[%d] = %d outside the table of %d rows", i, v, n)
		}
	}
	x, err := b.Alloc(backend.F32, len(ids)*dim)
	if err != nil {
		return nil, fmt.Errorf("cuda: UploadRows: %d rows of %d: %w", len(ids), dim, err)
	}
	const chunk = 1 << 16
	part := make([]float32, min(len(ids), chunk)*dim)
	for lo := 0; lo < len(ids); lo += chunk {
		hi := min(len(ids), lo+chunk)
		p := part[:(hi-lo)*dim]
		for i, v := range ids[lo:hi] {
			copy(p[i*dim:(i+1)*dim], feat[int(v)*dim:])
		}
		b.Write(x, lo*dim, p)
	}
	if err := b.Sync(); err != nil {
		b.Free(x)
		return nil, fmt.Errorf("cuda: UploadRows: %w", err)
	}
	return &devRows{owner: b, buf: x.(*buffer), rows: len(ids), dim: dim}, nil
}

// RowTable builds the pointer table of rows that live in this device's
// memory and its peers' (see backend.PeerRows). Peer access to each other
// device is enabled once; a device that cannot read another's memory is an
// error.
func (b *Backend) RowTable(numRows int64, rows []backend.Rows, at, index []int32, kind []uint8) (backend.RowTable, error) {
	if int64(len(at)) != numRows || int64(len(index)) != numRows || int64(len(kind)) != numRows {
		return nil, fmt.Errorf("cuda: RowTable: tables of %d, %d and %d entries for %d vertices", len(at), len(index), len(kind), numRows)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("cuda: RowTable: no rows")
	}
	rs := make([]*devRows, len(rows))
	t := &devRowTable{owner: b, numRows: numRows, vec: true}
	for i, r := range rows {
		d, ok := r.(*devRows)
		if !ok || d == nil {
			return nil, fmt.Errorf("cuda: RowTable: rows %d (%T) were not made by a cuda backend", i, r)
		}
		if i == 0 {
			t.dim = d.dim
		} else if d.dim != t.dim {
			return nil, fmt.Errorf("cuda: RowTable: rows %d are %d wide, rows 0 %d", i, d.dim, t.dim)
		}
		if d.buf.root != nil && d.buf.root.freed {
			return nil, fmt.Errorf("cuda: RowTable: rows %d were freed", i)
		}
		if d.owner != b {
			if err := b.enablePeer(d.owner); err != nil {
				return nil, err
			}
		}
		if d.rows > 0 && d.buf.ptr%16 != 0 {
			t.vec = false
		}
		rs[i] = d
	}
	t.vec = t.vec && t.dim%4 == 0
	addr := make([]int64, numRows)
	for v := range numRows {
		a, i := at[v], index[v]
		if a < 0 || int(a) >= len(rs) || i < 0 || int(i) >= rs[a].rows || kind[v] > backend.RowRemote {
			return nil, fmt.Errorf("cuda: RowTable: vertex %d points to row %d of rows %d (kind %d), which do not exist", v, i, a, kind[v])
		}
		addr[v] = int64(rs[a].buf.ptr) + 4*int64(i)*int64(t.dim)
	}
	x, err := b.Upload(addr)
	if err != nil {
		return nil, fmt.Errorf("cuda: RowTable: %w", err)
	}
	t.addr = x.(*buffer)
	if x, err = b.Upload(append([]uint8(nil), kind...)); err != nil {
		b.Free(t.addr)
		return nil, fmt.Errorf("cuda: RowTable: %w", err)
	}
	t.kind = x.(*buffer)
	return t, nil
}

// GatherRows copies each live id's row from where the table finds it
// (this device's memory or a peer's, read in place) and counts the rows by
// kind on the device (see backend.PeerRows). One launch: 16-byte words
// when every row and out allow it, else 4-byte words.
func (b *Backend) GatherRows(t backend.RowTable, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c := b.begin("GatherRows")
	defer c.end()
	if !c.ok {
		return
	}
	rt, ok := t.(*devRowTable)
	switch {
	case !ok || rt == nil || rt.owner != b:
		c.failf("t: row table of type %T does not belong to this cuda backend", t)
		return
	case rt.addr == nil || (rt.addr.root != nil && rt.addr.root.freed):
		c.failf("t: row table used after FreeRowTable")
		return
	}
	nP := c.count("n", n)
	idx := c.buf("ids", ids, backend.I32, n.Cap)
	ob := c.buf("out", out, backend.F32, n.Cap*rt.dim)
	st := c.optBuf("stats", stats, backend.I64, 3)
	if !c.ok {
		return
	}
	name, words := "peer_rows1", rt.dim
	if rt.vec && ob.ptr%16 == 0 {
		name, words = "peer_rows4", rt.dim/4
	}
	if rt.keep != nil {
		nstats := 0
		if st != nil {
			nstats = min(st.n, 4)
		}
		c.args().ptr(rt.addr.addr()).ptr(rt.kind.addr()).i64(rt.numRows).i32(words).ptr(idx.addr()).ptr(nP).i32(n.Cap).
			ptr(ob.addr()).ptr(st.addr()).i32(nstats).ptr(rt.keep.addr()).i32(rt.keepRows).ptr(rt.tag.addr()).
			ptr(rt.slot.addr()).ptr(rt.gen.addr()).ptr(b.errDev)
		c.launch(name+"_keep", d1(c.blocks(int64(n.Cap)*int64(words), 256)), d1(256), 0)
		c.args().ptr(rt.kind.addr()).i64(rt.numRows).ptr(idx.addr()).ptr(nP).i32(n.Cap).i32(rt.keepRows).
			ptr(rt.tag.addr()).ptr(rt.slot.addr()).ptr(rt.gen.addr())
		c.launch("peer_rows_tag", d1(c.blocks(int64(min(n.Cap, rt.keepRows)), 256)), d1(256), 0)
		c.args().ptr(rt.gen.addr())
		c.launch("peer_rows_advance", d1(1), d1(1), 0)
		return
	}
	c.args().ptr(rt.addr.addr()).ptr(rt.kind.addr()).i64(rt.numRows).i32(words).ptr(idx.addr()).ptr(nP).i32(n.Cap).
		ptr(ob.addr()).ptr(st.addr()).ptr(b.errDev)
	c.launch(name, d1(c.blocks(int64(n.Cap)*int64(words)/4+1, 256)), d1(256), 0)
}

// KeepRows makes the gathers through t keep their remote rows for the
// next (see backend.PeerRows): two halves of rows, a tag and a slot per
// vertex, and a gather counter, all on this device.
func (b *Backend) KeepRows(t backend.RowTable, rows int) error {
	rt, ok := t.(*devRowTable)
	if !ok || rt == nil || rt.owner != b || rt.addr == nil || rows < 0 {
		return fmt.Errorf("cuda: KeepRows: %d rows of a row table of type %T that this backend cannot use", rows, t)
	}
	var err error
	alloc := func(dt backend.DType, n int) *buffer {
		if err != nil {
			return nil
		}
		var x backend.Buffer
		if x, err = b.Alloc(dt, max(n, 1)); err != nil {
			return nil
		}
		return x.(*buffer)
	}
	rt.keep, rt.tag, rt.slot, rt.gen = alloc(backend.F32, 2*rows*rt.dim), alloc(backend.I32, int(rt.numRows)),
		alloc(backend.I32, int(rt.numRows)), alloc(backend.I32, 1)
	if err != nil {
		b.freeKeep(rt)
		return fmt.Errorf("cuda: KeepRows: %d rows: %w", rows, err)
	}
	rt.keepRows = rows
	b.Fill(rt.tag, math.MinInt32)
	return b.Sync()
}

// freeKeep releases what KeepRows allocated.
func (b *Backend) freeKeep(rt *devRowTable) {
	for _, x := range []*buffer{rt.keep, rt.tag, rt.slot, rt.gen} {
		if x != nil {
			b.Free(x)
		}
	}
	rt.keep, rt.tag, rt.slot, rt.gen, rt.keepRows = nil, nil, nil, nil, 0
}

// FreeRows releases rows made by this backend.
func (b *Backend) FreeRows(r backend.Rows) {
	if d, ok := r.(*devRows); ok && d != nil && d.owner == b {
		b.Free(d.buf)
	}
}

// FreeRowTable releases a table made by this backend (not the rows).
func (b *Backend) FreeRowTable(t backend.RowTable) {
	rt, ok := t.(*devRowTable)
	if !ok || rt == nil || rt.owner != b || rt.addr == nil {
		return
	}
	b.Free(rt.addr)
	b.Free(rt.kind)
	rt.addr, rt.kind = nil, nil
	b.freeKeep(rt)
}
