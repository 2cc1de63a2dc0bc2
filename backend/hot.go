package backend

// HotRows is the capability of the hybrid mode's hot vertices (package
// train/hybrid/hot): vertices whose bottom-layer rows are computed
// elsewhere, masked out of the bottom hop's sampling and written into a
// training pass's rows in their place. It is checked when the hot vertices
// are set up (HotRowsOf); models and stores never need it.
type HotRows interface {
	// MaskGraph is a view of g in which every vertex v with skip[v] >= 0
	// (skip I32 [g.NumNodes()] in backend memory, read when an op runs)
	// has no neighbours when SampleLayer samples it as a destination; every
	// other vertex's neighbours are g's, drawn as from g. Relabel treats the
	// view as g. The hybrid mode masks its hot vertices in the bottom hop,
	// whose rows the CPU computes.
	MaskGraph(g Graph, skip Buffer) (Graph, error)
	// ReplaceRows overwrites the rows of hot vertices: for i < n with s =
	// slot[ids[i]] >= 0 (slot I32 [N]), out[i, :] = table[base + s, :],
	// where base is the live value of a Count (base.Cap is unused), or 0
	// when table is nil. out is F32 [n.Cap, dim]; table is F32 [rows, dim],
	// typically host memory the device reads in place (UploadHost). Other
	// rows are left as they are.
	ReplaceRows(slot, table Buffer, base Count, dim int, ids Buffer, n Count, out Buffer)
	// AddRows adds table rows into the rows of hot vertices: for i < n with
	// s = slot[ids[i]] >= 0, out[i·ld + off + c] += table[(base + s)·dim + c]
	// for c < dim, where base is the live value of a Count (base.Cap is
	// unused). out is F32 [n.Cap, ld] with off + dim <= ld; table is F32
	// [rows, dim], typically host memory the device reads in place. Other
	// rows and columns are left as they are.
	AddRows(slot, table Buffer, base Count, dim int, ids Buffer, n Count, out Buffer, ld, off int)
	// ScatterAddRows adds the rows of hot vertices into an accumulator: for
	// i < n with s = slot[ids[i]] >= 0, acc[s, :] += src[i, :]. ids must
	// not repeat a vertex among the live rows (a block's destinations do
	// not). acc is F32 [rows, dim]; src F32 [n.Cap, dim]. Nothing is added
	// while unless (an I32 flag, element 0; may be nil) is non-zero.
	ScatterAddRows(slot, acc Buffer, dim int, ids Buffer, n Count, src, unless Buffer)
	// Axpy: y[i] += alpha·x[i] for every element (x and y F32 of one
	// length).
	Axpy(alpha float32, x, y Buffer)
}

// HotRowsOf is be's HotRows (be itself, or the wrapper around a backend
// that has it), or an error naming be and the capability.
func HotRowsOf(be Backend) (HotRows, error) {
	return need[HotRows](be, "the hot-row ops (backend.HotRows)")
}
