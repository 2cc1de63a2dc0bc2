package backendtest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// maxReports bounds the mismatches reported per check.
const maxReports = 5

// Tolerances: bounds on |got - want| relative to a scale, the float64
// reference's magnitude for elementwise ops and the sum of the terms'
// magnitudes for sums. Run logs the largest error each tolerance's checks
// measured ("measured relative error"); the figures below are the CPU
// backend's (1, 2 and 3 threads alike). Both general tolerances sit above
// 10x the CPU's figures: they are the suite's contract with every backend,
// and a GPU's errors are larger than the CPU's and not yet measured (the
// figures its run logs decide whether they can come down).
const (
	// tolElem: elementwise float32 ops. Measured 1.9e-7 (Adam's v: a few
	// roundings of float32 steps): 52x, for a GPU's exp, log and division
	// approximations, a few ulp each, and more for exp of a large argument.
	tolElem = 1e-5
	// tolSum: sums (matrix products, aggregations and their backward
	// passes). Measured 4.9e-6 (EdgeSoftmaxBackward's del): 20x, for a
	// GPU's other orders of summation (atomics, split sums, tensor-core
	// kernels): a float32 sum of n terms in another order may part by up
	// to about n·2^-24 of the magnitudes, 6e-6 for n = 100.
	tolSum = 1e-4
	// tolBF16: rounding to bfloat16 (8 significant bits) moves a value by
	// at most 2^-8 of its magnitude, so a bfloat16 result of a sum within
	// tolSum of the float32 one is within tolBF16·|result| + tolSum·(the
	// terms' magnitudes) of it. Measured 3.6e-3 of that scale: the bound is
	// the rounding's own, 1.1x by construction, not a margin.
	tolBF16 = 0x1p-8
)

// checkClose requires |got[i] - want[i]| <= tol·scale[i] for i < len(want)
// (scale nil: |want[i]|), a NaN or an infinity in got always failing, and
// records the largest error it measured for the suite's summary (Run).
// cols > 0 prints positions as (row, col).
func (e *env) checkClose(what string, got []float32, want, scale []float64, tol float64, cols int) {
	e.t.Helper()
	misses, worst := compareClose(got, want, scale, tol)
	for _, i := range misses[:min(len(misses), maxReports)] {
		e.t.Errorf("%s at %s: got %g, want %g (tolerance %g)", what, pos(i, cols), got[i], want[i], tol*scaleAt(want, scale, i))
	}
	if len(misses) > maxReports {
		e.t.Errorf("%s: %d mismatches in all (of %d)", what, len(misses), len(want))
	}
	e.measured.add(tol, worst, e.name+": "+what)
}

// compareClose returns the positions i < len(want) where got[i] misses
// want[i] by more than tol·scale[i] (scale nil: |want[i]|), a NaN or an
// infinity on either side always missing, and the largest error measured
// at the others, |got[i] - want[i]| / scale[i] (0 where both are 0).
func compareClose(got []float32, want, scale []float64, tol float64) (misses []int, worst float64) {
	for i, w := range want {
		s, g := scaleAt(want, scale, i), float64(got[i])
		if tolerance.Within(g, w, s, tol) != nil {
			misses = append(misses, i)
			continue
		}
		if d := math.Abs(g - w); d > 0 {
			worst = max(worst, d/s)
		}
	}
	return misses, worst
}

func scaleAt(want, scale []float64, i int) float64 {
	if scale != nil {
		return scale[i]
	}
	return math.Abs(want[i])
}

// checkEqual requires got[i] == want[i] for i < len(want).
func checkEqual[T comparable](t *testing.T, what string, got, want []T, cols int) {
	t.Helper()
	if len(got) < len(want) {
		t.Errorf("%s: got %d elements, want %d", what, len(got), len(want))
		return
	}
	bad := 0
	for i, w := range want {
		if got[i] != w {
			if bad < maxReports {
				t.Errorf("%s at %s: got %v, want %v", what, pos(i, cols), got[i], w)
			}
			bad++
		}
	}
	if bad > maxReports {
		t.Errorf("%s: %d mismatches in all (of %d)", what, bad, len(want))
	}
}

// checkCounts stops the test unless the int64 counters in buf are want.
func (e *env) checkCounts(what string, buf backend.Buffer, want []int64) {
	e.t.Helper()
	if got := readBack[int64](e, buf, len(want)); !slices.Equal(got, want) {
		e.t.Fatalf("%s: counts %v, want %v", what, got, want)
	}
}

// gatherRef returns the rows ids of table (dim wide) one after the other.
func gatherRef[T any](table []T, ids []int32, dim int) []T {
	out := make([]T, 0, len(ids)*dim)
	for _, id := range ids {
		out = append(out, table[int(id)*dim:(int(id)+1)*dim]...)
	}
	return out
}

func pos(i, cols int) string {
	if cols <= 0 {
		return fmt.Sprintf("[%d]", i)
	}
	return fmt.Sprintf("[%d, %d]", i/cols, i%cols)
}

// f64 widens a float32 slice.
func f64(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}
