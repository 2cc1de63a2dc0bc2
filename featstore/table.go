package featstore

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// table is a host feature table, [rows, dim] row-major, as its owner holds
// it (a dataset's, possibly memory-mapped): float32 values, or bfloat16
// bit patterns ([]uint16). The stores take either and hold rows as the
// run asks (backend.F32 or BF16), converting only what they copy:
// rounding float32 to bfloat16 (backend.BF16Bits) or widening bfloat16
// (exact).
type table struct {
	f32  []float32
	bf16 []uint16
	dt   backend.DType
	dim  int
	rows int64
}

// tableOf checks a host table: []float32, or []uint16 of bfloat16 bits,
// holding rows of width dim.
func tableOf(feat any, dim int) (table, error) {
	t := table{dim: dim}
	n := 0
	switch f := feat.(type) {
	case []float32:
		t.f32, t.dt, n = f, backend.F32, len(f)
	case []uint16:
		t.bf16, t.dt, n = f, backend.BF16, len(f)
	default:
		return t, fmt.Errorf("featstore: a feature table of %T, want []float32 or []uint16 (bfloat16 bits)", feat)
	}
	if dim <= 0 || n%dim != 0 {
		return t, fmt.Errorf("featstore: %d values are not rows of width %d", n, dim)
	}
	t.rows = int64(n / dim)
	return t, nil
}

// data is the table as given, for an upload in place.
func (t table) data() any {
	if t.dt == backend.BF16 {
		return t.bf16
	}
	return t.f32
}

// newRows allocates host room for n rows of dt (F32 or BF16).
func (t table) newRows(dt backend.DType, n int) any {
	if dt == backend.BF16 {
		return make([]uint16, n*t.dim)
	}
	return make([]float32, n*t.dim)
}

// prefix is the first n rows of rows made by newRows.
func (t table) prefix(rows any, n int) any {
	if r, ok := rows.([]uint16); ok {
		return r[:n*t.dim]
	}
	return rows.([]float32)[:n*t.dim]
}

// put writes row v of t into row i of dst (made by newRows), converted to
// dst's type.
func (t table) put(dst any, i int, v int64) {
	src := int(v) * t.dim
	switch o := dst.(type) {
	case []float32:
		if t.dt == backend.F32 {
			copy(o[i*t.dim:(i+1)*t.dim], t.f32[src:])
		} else {
			convert(o[i*t.dim:(i+1)*t.dim], t.bf16[src:], backend.BF16Float)
		}
	case []uint16:
		if t.dt == backend.BF16 {
			copy(o[i*t.dim:(i+1)*t.dim], t.bf16[src:])
		} else {
			convert(o[i*t.dim:(i+1)*t.dim], t.f32[src:], backend.BF16Bits)
		}
	}
}

// convert writes f of each of src's first len(dst) values into dst.
func convert[S, D any](dst []D, src []S, f func(S) D) {
	for j := range dst {
		dst[j] = f(src[j])
	}
}

// hostRows is rows at(0), ..., at(n-1) of t as a new host table of dt.
func (t table) hostRows(dt backend.DType, n int, at func(i int) int64) any {
	out := t.newRows(dt, n)
	for i := range n {
		t.put(out, i, at(i))
	}
	return out
}

// as is the whole table as dt: t's own slice when it is held so (no
// copy), else a converted copy.
func (t table) as(dt backend.DType) any {
	if dt == t.dt {
		return t.data()
	}
	return t.hostRows(dt, int(t.rows), func(i int) int64 { return int64(i) })
}

// writeRows writes rows at(0), ..., at(n-1) of t, converted to dst's
// dtype, into the backend buffer dst from its first row, through one
// reused host chunk: the host holds a chunk, not a second table (Write
// has the data once it returns; with a table of most of the host's memory
// live, fresh chunks would pile up as garbage faster than the collector,
// paced by the live heap, frees them).
func (t table) writeRows(be backend.Backend, dst backend.Buffer, n int, at func(i int) int64) {
	const chunk = 1 << 16
	buf := t.newRows(dst.DType(), min(n, chunk))
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		for i := lo; i < hi; i++ {
			t.put(buf, i-lo, at(i))
		}
		be.Write(dst, lo*t.dim, t.prefix(buf, hi-lo))
	}
}

// upload makes the table resident on be as dt: in place where it is held
// so (the CPU backend uses the slice itself; CUDA copies it straight from
// the host table), else converted chunk by chunk into a buffer of dt.
func (t table) upload(be backend.Backend, dt backend.DType) (backend.Buffer, error) {
	if dt == t.dt {
		return be.Upload(t.data())
	}
	x, err := be.Alloc(dt, int(t.rows)*t.dim)
	if err != nil {
		return nil, err
	}
	t.writeRows(be, x, int(t.rows), func(i int) int64 { return int64(i) })
	if err := be.Sync(); err != nil {
		be.Free(x)
		return nil, err
	}
	return x, nil
}

// widenRows is rows ids of t as a float32 table of their own, with the
// ids of its rows (0, 1, ...); an id outside t is an error.
func widenRows(t table, ids []int32) ([]float32, []int32, error) {
	own := make([]int32, len(ids))
	for i, v := range ids {
		if v < 0 || int64(v) >= t.rows {
			return nil, nil, fmt.Errorf("featstore: ids[%d] = %d outside the table of %d rows", i, v, t.rows)
		}
		own[i] = int32(i)
	}
	return t.hostRows(backend.F32, len(ids), func(i int) int64 { return int64(ids[i]) }).([]float32), own, nil
}
