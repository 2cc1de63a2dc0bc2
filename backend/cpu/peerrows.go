package cpu

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.PeerRows = (*Backend)(nil)

// cpuRows are feature rows copied into this backend's memory.
type cpuRows struct {
	owner *Backend
	buf   *buffer // F32 [rows*dim], counted as this backend's memory
	vals  []float32
	dim   int
}

func (r *cpuRows) Rows() int { return len(r.vals) / r.dim }
func (r *cpuRows) Dim() int  { return r.dim }

// cpuRowTable finds each vertex's row in the rows of a group. On the CPU
// every device's memory is the host's, so the table holds the rows' slices
// and GatherRows reads them in place.
type cpuRowTable struct {
	owner    *Backend
	rows     [][]float32 // each Rows' values
	at       *buffer     // I32 [N]
	index    *buffer     // I32 [N]
	kind     *buffer     // U8 [N]
	dim      int
	numRows  int64
	released bool
	// KeepRows: two halves of kept rows (the last gather's and the one
	// before), and per vertex the gather that kept its row and where.
	keep      [2][]float32
	keepRows  int
	tag, slot []int32
	gen       int32
}

func (t *cpuRowTable) NumRows() int64 { return t.numRows }
func (t *cpuRowTable) Dim() int       { return t.dim }

// UploadRows copies the rows ids of the [N, dim] float32 table (see
// backend.PeerRows).
func (b *Backend) UploadRows(table any, dim int, ids []int32) (backend.Rows, error) {
	feat, err := rowTable("cpu", table, dim)
	if err != nil {
		return nil, err
	}
	n := len(feat) / dim
	vals := make([]float32, 0, len(ids)*dim)
	for i, v := range ids {
		if v < 0 || int(v) >= n {
			return nil, fmt.Errorf("cpu: UploadRows: ids[%d] = %d outside the table of %d rows", i, v, n)
		}
		vals = append(vals, feat[int(v)*dim:(int(v)+1)*dim]...)
	}
	x, err := b.Upload(vals)
	if err != nil {
		return nil, err
	}
	return &cpuRows{owner: b, buf: x.(*buffer), vals: vals, dim: dim}, nil
}

// rowTable checks UploadRows' table: float32 rows of width dim.
func rowTable(be string, table any, dim int) ([]float32, error) {
	switch t := table.(type) {
	case []float32:
		if dim <= 0 || len(t)%dim != 0 {
			return nil, fmt.Errorf("%s: UploadRows: %d values are not rows of width %d", be, len(t), dim)
		}
		return t, nil
	case []uint16:
		return nil, fmt.Errorf("%s: UploadRows: a bfloat16 table cannot be spread over devices (only float32 rows); hold the features as float32 or keep the whole table on every device", be)
	}
	return nil, fmt.Errorf("%s: UploadRows: unsupported table %T (want []float32)", be, table)
}

// RowTable builds the per-vertex table over rows made by any cpu backend
// (see backend.PeerRows).
func (b *Backend) RowTable(numRows int64, rows []backend.Rows, at, index []int32, kind []uint8) (backend.RowTable, error) {
	if int64(len(at)) != numRows || int64(len(index)) != numRows || int64(len(kind)) != numRows {
		return nil, fmt.Errorf("cpu: RowTable: tables of %d, %d and %d entries for %d vertices", len(at), len(index), len(kind), numRows)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("cpu: RowTable: no rows")
	}
	t := &cpuRowTable{owner: b, numRows: numRows}
	for i, r := range rows {
		c, ok := r.(*cpuRows)
		if !ok || c == nil {
			return nil, fmt.Errorf("cpu: RowTable: rows %d (%T) were not made by a cpu backend", i, r)
		}
		if i == 0 {
			t.dim = c.dim
		} else if c.dim != t.dim {
			return nil, fmt.Errorf("cpu: RowTable: rows %d are %d wide, rows 0 %d", i, c.dim, t.dim)
		}
		t.rows = append(t.rows, c.vals)
	}
	for v := range numRows {
		a, i := at[v], index[v]
		if a < 0 || int(a) >= len(rows) || i < 0 || int(i) >= rows[a].Rows() || kind[v] > backend.RowRemote {
			return nil, fmt.Errorf("cpu: RowTable: vertex %d points to row %d of rows %d (kind %d), which do not exist", v, i, a, kind[v])
		}
	}
	var bufs [3]backend.Buffer
	for i, data := range []any{append([]int32(nil), at...), append([]int32(nil), index...), append([]uint8(nil), kind...)} {
		x, err := b.Upload(data)
		if err != nil {
			for _, y := range bufs[:i] {
				b.Free(y)
			}
			return nil, err
		}
		bufs[i] = x
	}
	t.at, t.index, t.kind = bufs[0].(*buffer), bufs[1].(*buffer), bufs[2].(*buffer)
	return t, nil
}

// GatherRows copies each live id's row from wherever the table finds it
// and counts the rows by kind (see backend.PeerRows).
func (b *Backend) GatherRows(t backend.RowTable, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c := b.begin("GatherRows")
	defer c.end()
	rt, ok := t.(*cpuRowTable)
	switch {
	case !c.ok:
		return
	case !ok || rt == nil || rt.owner != b:
		c.failf("t: row table of type %T does not belong to this cpu backend", t)
		return
	case rt.released:
		c.failf("t: row table used after FreeRowTable")
		return
	}
	dim := rt.dim
	live, _ := c.count("n", n)
	idx := c.i32("ids", ids, n.Cap)
	ob := c.buf("out", out, backend.F32, n.Cap*dim)
	var st []int64
	if !isNil(stats) {
		st = c.i64("stats", stats, 3)
	}
	if !c.ok {
		return
	}
	at, index, kind := rt.at.i32, rt.index.i32, rt.kind.u8
	var counts [4]int64 // local, replica, remote read from the peer, remote reused
	g := rt.gen
	prev, cur := rt.keep[(g-1)&1], rt.keep[g&1]
	b.gatherRows(&c, idx[:live], int(rt.numRows), dim, rowRef{f32: ob.f32}, func(i int, v int32) (rowRef, int) {
		r := int(index[v])
		row := rt.rows[at[v]][r*dim : (r+1)*dim]
		k := int(kind[v])
		if k == int(backend.RowRemote) && rt.keepRows > 0 {
			if s := int(rt.slot[v]); rt.tag[v] == g-1 && s >= 0 && s < rt.keepRows {
				row, k = prev[s*dim:(s+1)*dim], 3
			}
			if i < rt.keepRows {
				copy(cur[i*dim:(i+1)*dim], row)
			}
		}
		return rowRef{f32: row}, k
	}, counts[:])
	if !c.ok {
		return
	}
	if rt.keepRows > 0 {
		for i, v := range idx[:min(live, rt.keepRows)] {
			if kind[v] == backend.RowRemote {
				rt.tag[v], rt.slot[v] = g, int32(i)
			}
		}
		rt.gen++
	}
	if st != nil {
		if len(st) < 4 {
			counts[2] += counts[3] // no place for the reused rows: they count as remote
		}
		for k := range min(len(st), 4) {
			st[k] += counts[k]
		}
	}
}

// KeepRows makes the gathers through t keep their remote rows for the next
// (see backend.PeerRows).
func (b *Backend) KeepRows(t backend.RowTable, rows int) error {
	c := b.begin("KeepRows")
	defer c.end()
	rt, ok := t.(*cpuRowTable)
	if !c.ok {
		return b.err
	}
	if !ok || rt == nil || rt.owner != b || rt.released || rows < 0 {
		return fmt.Errorf("cpu: KeepRows: %d rows of a row table of type %T that this backend cannot use", rows, t)
	}
	rt.keepRows = rows
	rt.keep = [2][]float32{make([]float32, rows*rt.dim), make([]float32, rows*rt.dim)}
	rt.tag, rt.slot = make([]int32, rt.numRows), make([]int32, rt.numRows)
	for v := range rt.tag {
		rt.tag[v] = math.MinInt32
	}
	return nil
}

// FreeRows releases rows made by this backend.
func (b *Backend) FreeRows(r backend.Rows) {
	if c, ok := r.(*cpuRows); ok && c != nil && c.owner == b {
		b.Free(c.buf)
	}
}

// FreeRowTable releases a table made by this backend.
func (b *Backend) FreeRowTable(t backend.RowTable) {
	rt, ok := t.(*cpuRowTable)
	if !ok || rt == nil || rt.owner != b || rt.released {
		return
	}
	for _, x := range []*buffer{rt.at, rt.index, rt.kind} {
		b.Free(x)
	}
	rt.released = true
}
