package tolerance

import (
	"math"
	"strings"
	"testing"
)

var nonFinite = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}

func TestWithinRejectsNonFinite(t *testing.T) {
	for _, v := range nonFinite {
		for _, bound := range []float64{1e-5, 1, math.Inf(1)} {
			if Within(v, 1, 1, bound) == nil {
				t.Errorf("Within(%v, 1, 1, %g) = nil", v, bound)
			}
			if Within(1, v, 1, bound) == nil {
				t.Errorf("Within(1, %v, 1, %g) = nil", v, bound)
			}
			if Within(v, v, 1, bound) == nil {
				t.Errorf("Within(%v, %v, 1, %g) = nil", v, v, bound)
			}
		}
		if Within(1, 1, v, 1) == nil {
			t.Errorf("Within(1, 1, %v, 1) = nil: a scale that is not finite must fail", v)
		}
	}
	if Within(1, 1, 1, math.NaN()) == nil {
		t.Errorf("Within(1, 1, 1, NaN) = nil: a bound that is not a number must fail")
	}
}

func TestWithinBound(t *testing.T) {
	if err := Within(1.0001, 1, 1, 1e-3); err != nil {
		t.Errorf("within the bound: %v", err)
	}
	if err := Within(1.01, 1, 1, 1e-3); err == nil || !strings.Contains(err.Error(), "above") {
		t.Errorf("past the bound: %v", err)
	}
	if err := Within(0, 0, 0, 0); err != nil {
		t.Errorf("exact zero: %v", err)
	}
	if err := Within(1, 1.5, 2, 0.25); err != nil {
		t.Errorf("a difference equal to bound·scale: %v", err)
	}
	if Within(1, 1.5, 2, 0.2) == nil {
		t.Errorf("a difference past bound·scale (0.5 > 0.4) passed")
	}
}

// TestWithinInfiniteBound: a bound of +Inf checks only that the values
// are finite, at every finite scale, 0 included (Inf·0 is NaN, and a
// bound·scale computed so failed every pair).
func TestWithinInfiniteBound(t *testing.T) {
	for _, c := range [][3]float64{{0, 0, 0}, {5, -3, 0}, {1e300, -1e300, 1}, {2, 2, 1e-300}} {
		if err := Within(c[0], c[1], c[2], math.Inf(1)); err != nil {
			t.Errorf("Within(%v, %v, %v, +Inf): %v", c[0], c[1], c[2], err)
		}
	}
	for _, v := range nonFinite {
		if Within(v, 0, 0, math.Inf(1)) == nil || Within(0, v, 0, math.Inf(1)) == nil {
			t.Errorf("%v passed under a bound of +Inf at scale 0", v)
		}
	}
}

// TestWithinNegative: a negative bound or scale admits nothing, not even
// two equal values.
func TestWithinNegative(t *testing.T) {
	for _, c := range [][2]float64{{1, -1}, {-1, 1}, {0, -1}, {-1, 0}, {-1, math.Inf(1)}} {
		if Within(1, 1, c[0], c[1]) == nil {
			t.Errorf("Within(1, 1, scale %v, bound %v) = nil", c[0], c[1])
		}
	}
}

// TestRel: every case Rel documents.
func TestRel(t *testing.T) {
	for _, c := range []struct{ got, want, rel float64 }{
		{3, 2, 0.5}, {1, -2, 1.5}, {2, 2, 0}, {0, 0, 0}, {-0.0, 0, 0}, {1, 0, math.Inf(1)},
	} {
		if r := Rel(c.got, c.want); r != c.rel {
			t.Errorf("Rel(%v, %v) = %v, want %v", c.got, c.want, r, c.rel)
		}
	}
	inf := math.Inf(1)
	for _, c := range [][2]float64{{math.NaN(), 1}, {1, math.NaN()}, {math.NaN(), math.NaN()}, {inf, inf}, {-inf, -inf}, {1, inf}, {-inf, inf}} {
		if r := Rel(c[0], c[1]); !math.IsNaN(r) {
			t.Errorf("Rel(%v, %v) = %v, want NaN", c[0], c[1], r)
		}
	}
}

func TestLossesRejectNonFinite(t *testing.T) {
	want := []float32{2, 1.9, 1.8, 1.7}
	if worst, err := Losses(want, want, Every(0)); err != nil || worst != 0 {
		t.Fatalf("equal losses: worst %g, %v", worst, err)
	}
	for _, v := range nonFinite {
		for step := range want {
			got := append([]float32(nil), want...)
			got[step] = float32(v)
			for _, b := range []float64{1e-3, math.Inf(1)} {
				if _, err := Losses(got, want, Every(b)); err == nil {
					t.Errorf("%v at step %d, bound %g: no error", v, step, b)
				}
				if _, err := Losses(want, got, Every(b)); err == nil {
					t.Errorf("%v at reference step %d, bound %g: no error", v, step, b)
				}
			}
		}
	}
	if _, err := Losses(want[:3], want, Every(1)); err == nil {
		t.Errorf("3 steps against 4: no error")
	}
}

func TestLossesBoundPerStep(t *testing.T) {
	want := []float32{1, 1, 1}
	got := []float32{1.0001, 1.01, 1.5}
	bound := func(i int) float64 { return []float64{1e-3, 2e-2, math.Inf(1)}[i] }
	worst, err := Losses(got, want, bound)
	if err != nil || math.Abs(worst-0.5) > 1e-6 {
		t.Errorf("worst %g, %v; want 0.5 and no error", worst, err)
	}
	got[1] = 1.03
	if _, err := Losses(got, want, bound); err == nil || !strings.Contains(err.Error(), "step 1") {
		t.Errorf("a miss at step 1: %v", err)
	}
}

// TestLossesZeroReference: a bound of +Inf admits any finite loss against
// a reference loss of 0 (the worst is then +Inf); a finite bound admits
// only 0.
func TestLossesZeroReference(t *testing.T) {
	worst, err := Losses([]float32{0.5, 0}, []float32{0, 0}, Every(math.Inf(1)))
	if err != nil || !math.IsInf(worst, 1) {
		t.Errorf("bound +Inf against 0: worst %v, %v; want +Inf and no error", worst, err)
	}
	if _, err := Losses([]float32{0, 0}, []float32{0, 0}, Every(0)); err != nil {
		t.Errorf("0 against 0 at bound 0: %v", err)
	}
	if _, err := Losses([]float32{1e-30}, []float32{0}, Every(1e6)); err == nil {
		t.Errorf("a finite bound admitted 1e-30 against a reference of 0")
	}
}

func TestFails(t *testing.T) {
	if msg, failed := Fails(func(tb testing.TB) { tb.Fatalf("x %d", 1); tb.Errorf("never") }); !failed || msg != "x 1" {
		t.Errorf("Fatalf: %q, %t", msg, failed)
	}
	if _, failed := Fails(func(tb testing.TB) { tb.Helper(); tb.Logf("fine") }); failed {
		t.Errorf("a check that logs failed")
	}
	if msg, failed := Fails(func(tb testing.TB) { tb.Errorf("a"); tb.Errorf("b") }); !failed || msg != "a" {
		t.Errorf("Errorf: %q, %t", msg, failed)
	}
}
