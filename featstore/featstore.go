// Package featstore serves the input feature rows of a step. A Store is the
// seam between the training step and wherever the features live: resident in
// backend memory (Resident), tiered between a backend-resident cache and
// host memory the device reads directly (hybrid mode), or sharded across the
// memories of several devices (multi-GPU mode). The step only asks a Store to
// gather the rows of a batch's input vertices into a plan buffer; every
// Store does that as backend ops that take live counts from backend memory,
// so a gather is captured and replayed like any other op.
//
// Caches and instrumentation wrap the Store they serve.
package featstore

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Store serves rows of an [N, Dim] float32 feature table on one backend.
type Store interface {
	// Dim is the row width (features per vertex).
	Dim() int
	// Rows is N, the number of vertices.
	Rows() int64
	// Gather writes out[i, :] = row ids[i] for i < min(live n, n.Cap) as
	// backend ops (asynchronous, capturable, no host round trip). ids is I32
	// [n.Cap] of global vertex ids; out is F32 [n.Cap, Dim] (or, for a
	// Direct store, of its table's type).
	Gather(ids backend.Buffer, n backend.Count, out backend.Buffer)
	// DeviceBytes is the backend memory the store holds, in bytes.
	DeviceBytes() int64
	// Free releases what the store allocated.
	Free()
}

// Remote is implemented by stores whose gathers wait on transfers that
// compute can hide: other ranks' rows through all-to-alls (Exchanged). The
// replay driver fetches their rows a step ahead, beside the step before
// (from its bottom layer's forward pass on), into rows of their own. The
// tiered and disk stores are ones only where asked (Tiered.FetchAhead,
// Disk.FetchAhead): a tiered gather reads host memory from the SMs, and
// fetched a step ahead at a high hit rate it hid nothing while the second
// rows took room from its cache (docs/perf.md); a disk gather's host
// function and copies run beside the step before, one gather in flight.
type Remote interface {
	Remote() bool
}

// Tabled is implemented by stores whose whole table is one backend buffer
// (layer-wise inference reads it in place instead of through Gather).
type Tabled interface {
	Table() backend.Buffer // F32 [Rows, Dim]
}

// Direct is implemented by stores whose whole table lives in backend
// memory, where ops may read rows by id in place of a gather (a GraphSAGE
// bottom layer does: backend.Sparse's AggregateConcatTable). A tiered
// store's table is host memory behind a cache, and is not one. Their
// Gather also takes an out of the table's type (a bfloat16 table's rows
// copied as they are, backend.Gather).
type Direct interface {
	DeviceTable() backend.Buffer // F32 or BF16 [Rows, Dim]
}

// InPlace is implemented by stores whose rows lie in two tiers that ops
// read in place (Tiered): a cache in backend memory and the whole table in
// host memory. A GraphSAGE bottom layer reads a cached row from the cache
// by its slot (backend.TieredGather's AggregateConcatTiered), so a step
// gathers only the rows outside the cache (GatherMisses), each crossing
// PCIe once.
type InPlace interface {
	// Tiers are the cache (F32 or BF16 [cached rows, Dim]; nil while
	// nothing is cached) and the slot table (I32 [Rows]: a vertex's cache
	// row, or a negative code of the store's other tiers), as they are
	// now: read them when a step is issued, after the cache is filled.
	Tiers() (cache, slot backend.Buffer)
	// GatherMisses is Gather for the rows outside the cache: out[i, :] =
	// row ids[i] where that vertex has no cache row; the other rows of out
	// are not written. It counts rows as Gather does.
	GatherMisses(ids backend.Buffer, n backend.Count, out backend.Buffer)
	// DType is how the cache holds its rows (F32 or BF16), as the bottom
	// layer reads them.
	DType() backend.DType
}

// Resident is a store whose whole table lives in backend memory.
type Resident struct {
	be    backend.Backend
	table backend.Buffer
	dim   int
	rows  int64
	owned bool
}

// Upload makes the [rows, dim] table feat resident on be (the CPU backend
// uses the slice in place; the caller must not modify it afterwards).
func Upload(be backend.Backend, feat []float32, dim int) (*Resident, error) {
	return UploadAs(be, feat, dim, backend.F32)
}

// UploadAs is Upload of a table feat held as []float32 or as []uint16
// bfloat16 bit patterns (a bfloat16 dataset's), kept on be as dt:
// backend.F32 or backend.BF16 (half the bytes; gathered rows are widened
// back to float32), or 0 for feat's own type. A table held as dt is
// uploaded in place (the CPU backend uses the slice; CUDA copies it
// straight from the host); otherwise each value is converted, a chunk of
// rows at a time: rounded to bfloat16 (backend.BF16Bits), or widened.
func UploadAs(be backend.Backend, feat any, dim int, dt backend.DType) (*Resident, error) {
	t, err := tableOf(feat, dim)
	if err != nil {
		return nil, err
	}
	if dt != backend.BF16 && dt != backend.F32 {
		dt = t.dt
	}
	x, err := t.upload(be, dt)
	if err != nil {
		return nil, fmt.Errorf("featstore: upload %d x %d %s features: %w", t.rows, dim, dt, err)
	}
	return &Resident{be: be, table: x, dim: dim, rows: t.rows, owned: true}, nil
}

// Wrap serves an existing backend table ([rows, dim] F32) without owning it.
func Wrap(be backend.Backend, table backend.Buffer, dim int) *Resident {
	return &Resident{be: be, table: table, dim: dim, rows: int64(table.Len() / dim)}
}

func (r *Resident) Dim() int              { return r.dim }
func (r *Resident) Rows() int64           { return r.rows }
func (r *Resident) Table() backend.Buffer { return r.table }

// DeviceTable is the table in backend memory (Direct).
func (r *Resident) DeviceTable() backend.Buffer { return r.table }
func (r *Resident) DeviceBytes() int64 {
	return int64(r.table.Len()) * int64(r.table.DType().Size())
}
func (r *Resident) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	r.be.Gather(r.table, r.dim, ids, n, out)
}

// Free releases the table when the store uploaded it.
func (r *Resident) Free() {
	if r.owned && r.table != nil {
		r.be.Free(r.table)
	}
	r.table = nil
}
