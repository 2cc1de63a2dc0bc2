package backendtest

import (
	"fmt"
	"math"
	"testing"
)

// maxReports bounds the mismatches reported per check.
const maxReports = 5

// Tolerances: relative to the result for elementwise float32 ops, and to the
// sum of the terms' magnitudes for sums that a GPU may reorder.
const (
	tolElem = 1e-5
	tolSum  = 1e-4
)

// checkClose requires |got[i] - want[i]| <= tol·scale[i] for i < len(want)
// (scale nil: |want[i]|), NaN in got always failing. cols > 0 prints
// positions as (row, col).
func checkClose(t *testing.T, what string, got []float32, want, scale []float64, tol float64, cols int) {
	t.Helper()
	bad := 0
	for i, w := range want {
		s := math.Abs(w)
		if scale != nil {
			s = scale[i]
		}
		g := float64(got[i])
		if !(math.Abs(g-w) <= tol*s) {
			if bad < maxReports {
				t.Errorf("%s at %s: got %g, want %g (tolerance %g)", what, pos(i, cols), g, w, tol*s)
			}
			bad++
		}
	}
	if bad > maxReports {
		t.Errorf("%s: %d mismatches in all (of %d)", what, bad, len(want))
	}
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
