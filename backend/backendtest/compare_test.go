package backendtest

import (
	"math"
	"slices"
	"testing"
)

// TestCompareCloseRejectsNaN: a NaN or an infinity on either side of a
// conformance check misses, whatever the tolerance and scale; equal values
// pass and measure 0.
func TestCompareCloseRejectsNaN(t *testing.T) {
	got, want, scale := []float32{1, -2, 0.5}, []float64{1, -2, 0.5}, []float64{3, 3, 3}
	for _, sc := range [][]float64{nil, scale} {
		if misses, worst := compareClose(got, want, sc, tolElem); len(misses) != 0 || worst != 0 {
			t.Fatalf("equal values: misses %v, measured %g", misses, worst)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for i := range want {
			for _, sc := range [][]float64{nil, scale} {
				g := slices.Clone(got)
				g[i] = float32(v)
				if misses, _ := compareClose(g, want, sc, tolSum); !slices.Equal(misses, []int{i}) {
					t.Errorf("got[%d] = %v, scale %v: misses %v, want [%d]", i, v, sc, misses, i)
				}
				w := slices.Clone(want)
				w[i] = v
				if misses, _ := compareClose(got, w, sc, tolSum); !slices.Equal(misses, []int{i}) {
					t.Errorf("want[%d] = %v, scale %v: misses %v, want [%d]", i, v, sc, misses, i)
				}
			}
			s := slices.Clone(scale)
			s[i] = v
			if misses, _ := compareClose(got, want, s, tolSum); !slices.Equal(misses, []int{i}) {
				t.Errorf("scale[%d] = %v: misses %v, want [%d]", i, v, misses, i)
			}
		}
	}
}

// TestCompareCloseMeasures: the error measured is the largest of |got -
// want| / scale among the values that pass, and a miss is found at the
// tolerance's edge.
func TestCompareCloseMeasures(t *testing.T) {
	want, scale := []float64{1, 2, 4}, []float64{1, 1, 10}
	got := []float32{1, 2 + 1.0/512, 4}
	misses, worst := compareClose(got, want, scale, 1e-2)
	if len(misses) != 0 || math.Abs(worst-1.0/512) > 1e-12 {
		t.Errorf("misses %v, measured %g; want none and %g", misses, worst, 1.0/512)
	}
	if misses, _ := compareClose(got, want, scale, 1e-3); !slices.Equal(misses, []int{1}) {
		t.Errorf("tolerance 1e-3: misses %v, want [1]", misses)
	}
}
