package tolerance

import (
	"math"
	"strings"
	"testing"
)

// TestFinite: every value finite passes; the first value that is not is
// named, with the count.
func TestFinite(t *testing.T) {
	if err := Finite([]float32{0, -1, 3e38}); err != nil {
		t.Errorf("finite values: %v", err)
	}
	if err := Finite([]float64(nil)); err != nil {
		t.Errorf("no values: %v", err)
	}
	err := Finite([]float64{1, math.Inf(-1), 2, math.NaN()})
	if err == nil || !strings.Contains(err.Error(), "2 of 4") || !strings.Contains(err.Error(), "[1] = -Inf") {
		t.Errorf("two values not finite: %v", err)
	}
}

// TestWorst: the largest difference relative to max(|want|, floor), and
// an error for a length or a value that is not finite on either side.
func TestWorst(t *testing.T) {
	w, err := Worst([]float64{1.1, 0.001, 0}, []float64{1, 0, 0}, 0.01)
	if err != nil || math.Abs(w-0.1) > 1e-12 {
		t.Errorf("Worst = %v, %v; want 0.1 (0.001 against 0 at floor 0.01 is 0.1 too)", w, err)
	}
	if w, err := Worst([]float32{1}, []float32{0}, 0); err != nil || !math.IsInf(w, 1) {
		t.Errorf("1 against 0 at floor 0: %v, %v; want +Inf", w, err)
	}
	if _, err := Worst([]float32{1, 2}, []float32{1}, 0); err == nil {
		t.Errorf("2 values against 1: no error")
	}
	for _, v := range nonFinite {
		if _, err := Worst([]float64{1, v}, []float64{1, 1}, 1); err == nil {
			t.Errorf("got %v: no error", v)
		}
		if _, err := Worst([]float64{1, 1}, []float64{1, v}, 1); err == nil || !strings.Contains(err.Error(), "reference") {
			t.Errorf("want %v: %v", v, err)
		}
	}
}

// TestCloseApart: Close admits differences up to the bound, Apart asks for
// one of at least the least; a NaN or an infinity fails both.
func TestCloseApart(t *testing.T) {
	a, b := []float32{1, 2, 4}, []float32{1, 2.001, 4} // 5e-4 apart, relative
	if err := Close(b, a, 0, 1e-3); err != nil {
		t.Errorf("Close at 1e-3: %v", err)
	}
	if Close(b, a, 0, 1e-4) == nil {
		t.Errorf("Close at 1e-4 passed a difference of 5e-4")
	}
	if err := Apart(b, a, 0, 4e-4); err != nil {
		t.Errorf("Apart at 4e-4: %v", err)
	}
	if Apart(b, a, 0, 1e-3) == nil || Apart(a, a, 0, 0.5) == nil {
		t.Errorf("Apart passed values closer than asked")
	}
	for _, v := range nonFinite {
		c := []float32{1, float32(v), 4}
		if Close(c, a, 0, math.Inf(1)) == nil || Apart(c, a, 0, 0) == nil || Close(a, c, 0, math.Inf(1)) == nil || Apart(a, c, 0, 0) == nil {
			t.Errorf("%v passed Close or Apart", v)
		}
	}
}
