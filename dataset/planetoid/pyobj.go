package planetoid

import (
	"fmt"
	"math"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/internal/pickle"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// ndarray is a decoded numeric NumPy array in C order, values widened to
// float64 (exact for the integer ids and one-hot labels these files hold).
type ndarray struct {
	shape []int64
	data  []float64
}

// isGlobal reports whether g names one of the given module prefixes and name.
func isGlobal(g *pickle.Global, name string, modules ...string) bool {
	if g == nil || g.Name != name {
		return false
	}
	for _, m := range modules {
		if g.Module == m || strings.HasPrefix(g.Module, m+".") {
			return true
		}
	}
	return false
}

// asNdarray decodes a pickled numpy.ndarray: _reconstruct(ndarray, (0,), 'b')
// with the state (version, shape, dtype, is_fortran, raw bytes).
func asNdarray(v any) (*ndarray, error) {
	o, ok := v.(*pickle.Object)
	if !ok || !isGlobal(o.Class, "_reconstruct", "numpy.core.multiarray", "numpy._core.multiarray") {
		return nil, fmt.Errorf("want a numpy array, have a %s", pickle.TypeName(v))
	}
	st, ok := o.State.(pickle.Tuple)
	if ok && len(st) == 5 {
		st = st[1:] // drop the version
	}
	if !ok || len(st) != 4 {
		return nil, fmt.Errorf("numpy array state is not (version, shape, dtype, fortran, data)")
	}
	shape, err := intTuple(st[0])
	if err != nil {
		return nil, fmt.Errorf("numpy array shape: %w", err)
	}
	dt, err := asDtype(st[1])
	if err != nil {
		return nil, err
	}
	fortran, _ := st[2].(bool)
	raw, ok := st[3].(string)
	if !ok {
		return nil, fmt.Errorf("numpy array data is a %s, want bytes (object arrays are not supported)", pickle.TypeName(st[3]))
	}
	count := int64(1)
	for _, d := range shape {
		if d < 0 || (d > 0 && count > math.MaxInt64/d) {
			return nil, fmt.Errorf("numpy array shape %v is invalid", shape)
		}
		count *= d
	}
	if count > int64(len(raw)) || int64(len(raw)) != count*int64(dt.size) {
		return nil, fmt.Errorf("numpy array of shape %v and dtype %s holds %d bytes, want %d", shape, dt.descr, len(raw), count*int64(dt.size))
	}
	data := make([]float64, count)
	for i := range data {
		data[i] = dt.decode(raw[i*dt.size : (i+1)*dt.size])
	}
	a := &ndarray{shape: shape, data: data}
	if fortran && len(shape) == 2 {
		a.transposeFromFortran()
	} else if fortran && len(shape) > 2 {
		return nil, fmt.Errorf("Fortran-order numpy array of %d dimensions is not supported", len(shape))
	}
	return a, nil
}

// transposeFromFortran reorders a column-major 2-D array into C order.
func (a *ndarray) transposeFromFortran() {
	rows, cols := a.shape[0], a.shape[1]
	out := make([]float64, len(a.data))
	for c := int64(0); c < cols; c++ {
		for r := int64(0); r < rows; r++ {
			out[r*cols+c] = a.data[c*rows+r]
		}
	}
	a.data = out
}

// intTuple converts a tuple of ints.
func intTuple(v any) ([]int64, error) {
	t, ok := v.(pickle.Tuple)
	if !ok {
		return nil, fmt.Errorf("want a tuple of ints, have a %s", pickle.TypeName(v))
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok {
			return nil, fmt.Errorf("want a tuple of ints, element %d is a %s", i, pickle.TypeName(x))
		}
		out[i] = n
	}
	return out, nil
}

// dtype is a decoded numpy.dtype of a fixed-size number.
type dtype struct {
	descr     string // e.g. "f4"
	kind      byte   // 'i', 'u', 'f', 'b'
	size      int    // bytes
	bigEndian bool
}

// asDtype decodes numpy.dtype(descr, 0, 1) with the state (version, byte
// order, ...).
func asDtype(v any) (dtype, error) {
	o, ok := v.(*pickle.Object)
	if !ok || !isGlobal(o.Class, "dtype", "numpy") || len(o.Args) == 0 {
		return dtype{}, fmt.Errorf("want a numpy dtype, have a %s", pickle.TypeName(v))
	}
	descr, ok := o.Args[0].(string)
	if !ok || len(descr) < 2 {
		return dtype{}, fmt.Errorf("numpy dtype descriptor is not a string")
	}
	dt := dtype{descr: descr, kind: descr[0]}
	switch descr[1:] {
	case "1":
		dt.size = 1
	case "2":
		dt.size = 2
	case "4":
		dt.size = 4
	case "8":
		dt.size = 8
	}
	valid := dt.size > 0 && ((dt.kind == 'i' || dt.kind == 'u') ||
		(dt.kind == 'f' && dt.size >= 4) || (dt.kind == 'b' && dt.size == 1))
	if !valid {
		return dtype{}, fmt.Errorf("numpy dtype %s is not supported (want bool, int, uint, float32 or float64)", quote.Quote(descr))
	}
	if st, ok := o.State.(pickle.Tuple); ok && len(st) > 1 {
		order, _ := st[1].(string)
		dt.bigEndian = order == ">"
	}
	return dt, nil
}

// decode converts one element.
func (dt dtype) decode(b string) float64 {
	var bits uint64
	if dt.size == 1 {
		bits = uint64(b[0])
	} else if dt.bigEndian {
		for i := 0; i < len(b); i++ { // bytes, not runes
			bits = bits<<8 | uint64(b[i])
		}
	} else {
		for i := len(b) - 1; i >= 0; i-- {
			bits = bits<<8 | uint64(b[i])
		}
	}
	switch dt.kind {
	case 'f':
		if dt.size == 4 {
			return float64(math.Float32frombits(uint32(bits)))
		}
		return math.Float64frombits(bits)
	case 'i':
		shift := 64 - 8*dt.size
		return float64(int64(bits<<shift) >> shift)
	}
	return float64(bits) // 'u', 'b'
}

// matrix is a dense [rows, cols] float32 matrix, row-major.
type matrix struct {
	rows, cols int64
	data       []float32
}

// asMatrix decodes a scipy.sparse CSR matrix or a 2-D numpy array into a
// dense matrix of at most maxElems elements.
func asMatrix(v any, maxElems int64) (*matrix, error) {
	if o, ok := v.(*pickle.Object); ok && (isGlobal(o.Class, "csr_matrix", "scipy.sparse") || isGlobal(o.Class, "csr_array", "scipy.sparse")) {
		return csrToDense(o, maxElems)
	}
	a, err := asNdarray(v)
	if err != nil {
		return nil, fmt.Errorf("want a scipy.sparse.csr_matrix or numpy array: %w", err)
	}
	if len(a.shape) != 2 {
		return nil, fmt.Errorf("numpy array has %d dimensions, want 2", len(a.shape))
	}
	m := &matrix{rows: a.shape[0], cols: a.shape[1], data: make([]float32, len(a.data))}
	for i, x := range a.data {
		m.data[i] = float32(x)
	}
	return m, nil
}

// csrToDense expands a pickled csr_matrix (state: a dict with _shape,
// indptr, indices, data).
func csrToDense(o *pickle.Object, maxElems int64) (*matrix, error) {
	st, ok := o.State.(*pickle.Dict)
	if !ok {
		return nil, fmt.Errorf("csr_matrix state is a %s, want a dict", pickle.TypeName(o.State))
	}
	shapeV, ok := st.Get("_shape")
	if !ok {
		shapeV, ok = st.Get("shape")
	}
	if !ok {
		return nil, fmt.Errorf("csr_matrix has no shape")
	}
	shape, err := intTuple(shapeV)
	if err != nil || len(shape) != 2 || shape[0] < 0 || shape[1] < 0 {
		return nil, fmt.Errorf("csr_matrix shape is not two non-negative sizes")
	}
	parts := map[string]*ndarray{}
	for _, key := range []string{"indptr", "indices", "data"} {
		v, ok := st.Get(key)
		if !ok {
			return nil, fmt.Errorf("csr_matrix has no %s", key)
		}
		if parts[key], err = asNdarray(v); err != nil {
			return nil, fmt.Errorf("csr_matrix %s: %w", key, err)
		}
	}
	rows, cols := shape[0], shape[1]
	indptr, indices, vals := parts["indptr"].data, parts["indices"].data, parts["data"].data
	if int64(len(indptr)) != rows+1 || indptr[0] != 0 || int(indptr[rows]) != len(indices) || len(vals) != len(indices) {
		return nil, fmt.Errorf("csr_matrix of shape (%d, %d) has inconsistent indptr (%d), indices (%d) and data (%d)",
			rows, cols, len(indptr), len(indices), len(vals))
	}
	if cols > 0 && rows > maxElems/cols {
		return nil, fmt.Errorf("csr_matrix of shape (%d, %d) is too large to hold densely", rows, cols)
	}
	for r := int64(0); r < rows; r++ {
		if hi := indptr[r+1]; hi < indptr[r] || hi > float64(len(indices)) || hi != math.Trunc(hi) {
			return nil, fmt.Errorf("csr_matrix indptr[%d] = %v is not a valid offset", r+1, hi)
		}
	}
	m := &matrix{rows: rows, cols: cols, data: make([]float32, rows*cols)}
	for r := int64(0); r < rows; r++ {
		for k := int64(indptr[r]); k < int64(indptr[r+1]); k++ {
			c := indices[k]
			if c < 0 || c >= float64(cols) || c != math.Trunc(c) {
				return nil, fmt.Errorf("csr_matrix column index %v in row %d is out of range [0, %d)", c, r, cols)
			}
			m.data[r*cols+int64(c)] += float32(vals[k])
		}
	}
	return m, nil
}

// asAdjacency decodes a dict (or defaultdict) of vertex -> list of
// neighbours into edge lists.
func asAdjacency(v any) (src, dst []int64, err error) {
	d, ok := v.(*pickle.Dict)
	if !ok {
		return nil, nil, fmt.Errorf("want a dict of neighbour lists, have a %s", pickle.TypeName(v))
	}
	for _, k := range d.Keys() {
		u, ok := k.(int64)
		if !ok {
			return nil, nil, fmt.Errorf("graph key is a %s, want an int", pickle.TypeName(k))
		}
		var nbrs []any
		v, _ := d.Get(k)
		switch l := v.(type) {
		case *pickle.List:
			nbrs = l.Items
		case pickle.Tuple:
			nbrs = l
		default:
			return nil, nil, fmt.Errorf("neighbours of %d are a %s, want a list", u, pickle.TypeName(v))
		}
		for _, x := range nbrs {
			w, ok := x.(int64)
			if !ok {
				return nil, nil, fmt.Errorf("a neighbour of %d is a %s, want an int", u, pickle.TypeName(x))
			}
			src, dst = append(src, u), append(dst, w)
		}
	}
	return src, dst, nil
}
