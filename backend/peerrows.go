package backend

// Rows are feature rows resident on one backend (PeerRows.UploadRows),
// which the backends of its group may read.
type Rows interface {
	Rows() int // how many rows
	Dim() int  // values per row
}

// RowTable is a per-vertex table that finds every vertex's feature row
// among the Rows of a group (PeerRows.RowTable). It belongs to the backend
// that made it, whose GatherRows reads through it.
type RowTable interface {
	NumRows() int64 // vertices
	Dim() int       // values per row
}

// Where a RowTable finds a vertex's row: the same kinds as a PeerGraph's
// lists, counted in the same order.
const (
	RowLocal   = ListLocal   // among the rows this backend uploaded as its own
	RowReplica = ListReplica // a copy this backend keeps of another's row
	RowRemote  = ListRemote  // in a peer's memory, read in place
)

// PeerRows is implemented by backends that gather feature rows spread over
// the memories of a group of backends (the GPUs of a host reading each
// other's memory over NVLink or PCIe; CPU devices in one process). Only
// float32 tables: a bfloat16 table is refused. Fallback when absent: every
// device holds the whole table.
type PeerRows interface {
	// UploadRows makes the rows ids of the [N, dim] float32 table (a
	// []float32 of N*dim values) resident on this backend; row i is
	// ids[i]'s. A []uint16 (bfloat16) table is an error.
	UploadRows(table any, dim int, ids []int32) (Rows, error)
	// RowTable is a table of numRows vertices in which vertex v's row is
	// row index[v] of rows[at[v]] (made by this backend or by a peer of
	// its group), read where it lives; kind[v] (RowLocal, RowReplica,
	// RowRemote) is what GatherRows counts it as. Every Rows must have the
	// same width.
	RowTable(numRows int64, rows []Rows, at, index []int32, kind []uint8) (RowTable, error)
	// GatherRows is an op: out[i, :] = the row of vertex ids[i] for i <
	// min(live n, n.Cap), read through t (ids I32 [n.Cap], out F32 [n.Cap,
	// t.Dim()]); rows past the live count are untouched. stats, when not
	// nil, is I64 [3]: the rows read are added to stats[kind] (local,
	// replica, remote).
	GatherRows(t RowTable, ids Buffer, n Count, out, stats Buffer)
	// KeepRows makes every GatherRows through t keep on this device the
	// remote rows it read among the first rows of its output (up to rows
	// of them), so that the next GatherRows through t copies a row it needs
	// again from there instead of reading it from the peer (cross-batch
	// reuse; the rows are the same bits either way). With stats of 4
	// elements, GatherRows adds the rows it took from the kept ones to
	// stats[3] instead of stats[2]. It allocates: not during a capture.
	KeepRows(t RowTable, rows int) error
	// FreeRows releases rows; no RowTable may read them afterwards.
	FreeRows(r Rows)
	// FreeRowTable releases a table (not the rows it points to).
	FreeRowTable(t RowTable)
}

// PeerRowsOf is be's PeerRows, or nil when be (or the backend a wrapper
// forwards to) has none. It is be's own, so that a wrapper's GatherRows
// records or times the op; a wrapper only forwards it when the backend
// inside has it.
func PeerRowsOf(be Backend) PeerRows {
	p, _ := ownCapability[PeerRows](be)
	return p
}
