package cpu

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// Products whose x is mostly zeros skip the zeros: bag-of-words features
// (Planetoid Cora's rows are 98.7% zeros, 1,433 wide) multiply each nonzero
// x[i, k] into a row of the other operand (Linear: y[i, :] += x[i, k]·w[k,
// :]; LinearBackwardWeight: dw[k, :] += x[i, k]·dy[i, :]), float32 fused
// multiply-adds in k order (Linear) or i order (the weight gradient) from
// zero or the accumulated output. The sums differ from the dense kernel's,
// which adds the zeros' products in blocks, by float32 rounding; as its,
// they do not depend on the thread count. The nonzero share is read off a
// sample of x first, so dense operands pay almost nothing, and the rows'
// nonzeros are then listed in one pass, which gives up as soon as a task's
// rows hold too many. (An infinite or NaN element of the other operand met
// by a zero of x gives NaN in the dense product and nothing here.)

const (
	// sparseMinWidth is the narrowest x whose zeros are skipped: below it
	// the dense kernel's packing costs little.
	sparseMinWidth = 128
	// sparseMaxShare is the largest share of nonzero elements taken as
	// sparse.
	sparseMaxShare = 0.1
	// sparseSample is how many elements of x, evenly spread, are looked at
	// before a whole count.
	sparseSample = 4096
)

// nonzeros is the rows of x [rows, in] by their nonzero columns (compressed
// rows: row i's columns col[ptr[i]:ptr[i+1]] ascending, values val).
type nonzeros struct {
	ptr []int32
	col []int32
	val []float32
}

// sparseRows returns x[:rows·in]'s nonzeros when x is at least
// sparseMinWidth wide and at most sparseMaxShare of its elements are not
// zero (a sample of sparseSample elements decides first); ok is false
// otherwise.
func (b *Backend) sparseRows(x []float32, rows, in int) (nz nonzeros, ok bool) {
	n := rows * in
	if in < sparseMinWidth || n == 0 {
		return nz, false
	}
	step := max(1, n/sparseSample)
	most := int(sparseMaxShare * float64((n+step-1)/step)) // of the sample's elements
	hit := 0
	for k := 0; k < n; k += step {
		if x[k] != 0 {
			if hit++; hit > most {
				return nz, false // a dense x stops here, a tenth of the way at most
			}
		}
	}
	// One pass: each task lists its rows' nonzeros, and the lists are
	// joined in row order.
	type part struct {
		lo  int
		cnt []int32
		col []int32
		val []float32
	}
	var mu sync.Mutex
	var parts []part
	var dense atomic.Bool
	b.rows(rows, max(1, 4096/in), func(lo, hi int) {
		p, most := part{lo: lo, cnt: make([]int32, hi-lo)}, int(sparseMaxShare*float64((hi-lo)*in))
		for i := lo; i < hi; i++ {
			r := x[i*in : (i+1)*in]
			for k := nextNonzero(r, 0); k < in; k = nextNonzero(r, k+1) {
				p.col, p.val = append(p.col, int32(k)), append(p.val, r[k])
				p.cnt[i-lo]++
			}
			if len(p.col) > most || dense.Load() {
				dense.Store(true)
				return
			}
		}
		mu.Lock()
		parts = append(parts, p)
		mu.Unlock()
	})
	if dense.Load() {
		return nonzeros{}, false
	}
	slices.SortFunc(parts, func(a, b part) int { return a.lo - b.lo })
	nz.ptr = make([]int32, 1, rows+1)
	for _, p := range parts {
		for _, c := range p.cnt {
			nz.ptr = append(nz.ptr, nz.ptr[len(nz.ptr)-1]+c)
		}
		nz.col, nz.val = append(nz.col, p.col...), append(nz.val, p.val...)
	}
	return nz, true
}

// nextNonzero is the first k' >= k with r[k'] != 0, or len(r): runs of
// zeros (of either sign) skipped eight elements at a time (vec.ZeroRun).
func nextNonzero(r []float32, k int) int {
	for ; k < len(r) && k%8 != 0; k++ {
		if r[k] != 0 {
			return k
		}
	}
	for k += vec.ZeroRun(r[k:]); k < len(r); k++ {
		if r[k] != 0 {
			return k
		}
	}
	return len(r)
}

// byColumn is nz transposed: column k's rows ptr[k]:ptr[k+1] ascending,
// with their values (a stable counting sort).
func (nz nonzeros) byColumn(in int) nonzeros {
	t := nonzeros{ptr: make([]int32, in+1), col: make([]int32, len(nz.col)), val: make([]float32, len(nz.val))}
	for _, k := range nz.col {
		t.ptr[k+1]++
	}
	for k := range in {
		t.ptr[k+1] += t.ptr[k]
	}
	next := append([]int32(nil), t.ptr[:in]...)
	for i := range len(nz.ptr) - 1 {
		for p := nz.ptr[i]; p < nz.ptr[i+1]; p++ {
			k := nz.col[p]
			t.col[next[k]], t.val[next[k]] = int32(i), nz.val[p]
			next[k]++
		}
	}
	return t
}

// sparseWeightGrad sets dw = xᵀ·dy[:rows] (+ dw when accumulate) over x's
// nonzeros nz (x [rows, in]), dy [rows, out], dw [in, out]: each row of dw
// adds its terms in row order.
func (b *Backend) sparseWeightGrad(nz nonzeros, in int, dy []float32, out int, dw []float32, accumulate bool) {
	b.listSums(nz.byColumn(in), in, dy, out, dw, accumulate)
}

// listSums sets dst[r, :] = Σ_p l.val[p]·src[l.col[p], :] over row r's
// entries of l in order (+ dst[r, :] when accumulate) for r < n, rows of
// out: a row of dst per task. Over x's nonzeros, src w [in, out] and dst y
// [rows, out], it is Linear's y = x·w.
func (b *Backend) listSums(l nonzeros, n int, src []float32, out int, dst []float32, accumulate bool) {
	b.rows(n, max(1, 1024/out), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			d := dst[r*out : (r+1)*out]
			if !accumulate {
				clear(d)
			}
			for p := l.ptr[r]; p < l.ptr[r+1]; p++ {
				k := int(l.col[p])
				vec.Axpy(l.val[p], src[k*out:(k+1)*out], d)
			}
		}
	})
}
