package cpu

import (
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// The row gather that Gather, GatherTiered and GatherRows share, the twin
// of the CUDA kernels' one gather (backend/cuda/kernels/rows.cuh): a row
// source says where a vertex's row lies and under which kind it counts,
// and gatherRows checks the ids, copies the rows and counts them.

// rowRef is one stored row: float32 or int32 values, or bfloat16 bits
// widened to float32 as they are copied.
type rowRef struct {
	f32 []float32
	i32 []int32
	u16 []uint16
}

// rowOf is row r (dim values) of a float32, int32 or bfloat16 table.
func rowOf(t *buffer, r, dim int) rowRef {
	switch t.dt {
	case backend.BF16:
		return rowRef{u16: t.u16[r*dim : (r+1)*dim]}
	case backend.I32:
		return rowRef{i32: t.i32[r*dim : (r+1)*dim]}
	}
	return rowRef{f32: t.f32[r*dim : (r+1)*dim]}
}

// copyTo writes the row into row i of out (dim values): bfloat16 rows into
// a bfloat16 out as they are, else widened into its float32 rows; int32
// rows into its int32 rows; float32 rows into its float32 rows. rowRef{},
// no row, writes nothing.
func (r rowRef) copyTo(out rowRef, i, dim int) {
	switch {
	case r.f32 == nil && r.i32 == nil && r.u16 == nil:
	case r.u16 != nil && out.u16 != nil:
		copy(out.u16[i*dim:(i+1)*dim], r.u16)
	case r.u16 != nil:
		widenRow(out.f32[i*dim:(i+1)*dim], r.u16)
	case r.i32 != nil:
		copy(out.i32[i*dim:(i+1)*dim], r.i32)
	default:
		copy(out.f32[i*dim:(i+1)*dim], r.f32)
	}
}

// gatherRows writes row i of out (dim values, as copyTo writes them) =
// the row src gives for
// vertex idx[i], for every i, in parallel, and adds one per row to counts[kind]
// (counts, of at most 4 kinds, may be nil). Every id is checked against
// numRows first: one outside is an error, and nothing is written. src is
// called once per row, from several goroutines (for distinct i).
func (b *Backend) gatherRows(c *call, idx []int32, numRows, dim int, out rowRef, src func(i int, v int32) (rowRef, int), counts []int64) {
	for i, v := range idx {
		if v < 0 || int(v) >= numRows {
			c.failf("ids[%d] = %d outside the %d rows", i, v, numRows)
			return
		}
	}
	var mu sync.Mutex
	b.rows(len(idx), max(1, 4096/max(dim, 1)), func(lo, hi int) {
		var local [4]int64
		for i := lo; i < hi; i++ {
			row, k := src(i, idx[i])
			row.copyTo(out, i, dim)
			local[k]++
		}
		if counts != nil {
			mu.Lock()
			for k := range counts {
				counts[k] += local[k]
			}
			mu.Unlock()
		}
	})
}
