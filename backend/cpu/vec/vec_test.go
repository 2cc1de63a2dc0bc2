package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAxpy compares Axpy with a float64 reference for lengths around the
// loop widths, and checks that y past len(x) is untouched.
func TestAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for n := 0; n <= 80; n++ {
		x := make([]float32, n)
		y := make([]float32, n+3)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := range y {
			y[i] = float32(r.NormFloat64())
		}
		y0 := append([]float32(nil), y...)
		a := float32(r.NormFloat64())
		Axpy(a, x, y)
		for i := range y {
			if i >= n {
				if y[i] != y0[i] {
					t.Fatalf("n=%d: y[%d] past x changed", n, i)
				}
				continue
			}
			want := float64(y0[i]) + float64(a)*float64(x[i])
			scale := math.Abs(float64(y0[i])) + math.Abs(float64(a)*float64(x[i]))
			if math.Abs(float64(y[i])-want) > 1.2e-7*scale {
				t.Fatalf("n=%d: y[%d] = %g, want %g", n, i, y[i], want)
			}
		}
	}
}

// TestAxpyPositionIndependent: an element's result does not depend on its
// position in the row (the same operation is applied everywhere).
func TestAxpyPositionIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	x := make([]float32, 77)
	y := make([]float32, 77)
	for i := range x {
		x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	whole := append([]float32(nil), y...)
	Axpy(0.37, x, whole)
	for i := range x {
		one := []float32{y[i]}
		Axpy(0.37, x[i:i+1], one)
		if one[0] != whole[i] {
			t.Fatalf("element %d: %g alone, %g in the row", i, one[0], whole[i])
		}
	}
}

func BenchmarkAxpy100(b *testing.B) {
	x := make([]float32, 100)
	y := make([]float32, 100)
	for b.Loop() {
		Axpy(0.5, x, y)
	}
}

// TestZeroRun: ZeroRun gives the portable loop's run (whole groups of 8
// zeros of either sign; NaN, infinities and the smallest subnormal end it)
// on rows of every length up to 70 with a nonzero at every place or none.
func TestZeroRun(t *testing.T) {
	for n := 0; n <= 70; n++ {
		for at := -1; at < n; at++ {
			for _, v := range []float32{float32(math.NaN()), float32(math.Inf(-1)), math.Float32frombits(1), -3} {
				x := make([]float32, n)
				for k := range x {
					if k%3 == 0 {
						x[k] = float32(math.Copysign(0, -1))
					}
				}
				if at >= 0 {
					x[at] = v
				}
				want := 0
				if n >= 8 {
					want = zeroRunGo(x)
				}
				if got := ZeroRun(x); got != want {
					t.Fatalf("n %d, %g at %d: got %d, want %d", n, v, at, got, want)
				}
			}
		}
	}
}
