package nn

import (
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// Finite differences: the objective is evaluated in float32 by the backend
// and summed in float64 on the host; central differences with step fdEps.
// An analytic derivative a passes against the numeric n when
// |a-n| <= fdTol·max(|a|, |n|, floor), floor = 0.1·max|a| over the tensor
// (so entries near zero are judged against the tensor's scale), and the
// whole tensor must also agree in norm: ‖a-n‖ <= fdTol·‖a‖.
//
// A ReLU kink within fdEps of an activation bends the central difference
// (the analytic derivative is exact on either side): an entry that fails at
// fdEps is measured again at fdEpsFine, and passes if it agrees there.
const (
	fdEps     = 1e-2
	fdEpsFine = 1e-3
	fdTol     = 1e-2
)

// checkGrad compares analytic (the derivative of f with respect to the live
// elements idx of the F32 buffer x) with central differences, perturbing x
// in backend memory and restoring it afterwards.
func checkGrad(t *testing.T, be backend.Backend, name string, x backend.Buffer, idx []int, analytic []float32, f func() float64) {
	t.Helper()
	checkGradRes(t, be, name, x, idx, analytic, f, 0)
}

// checkGradLoss is checkGrad for f a float32 loss: a central difference at
// step eps is known only to ulp/(2·eps), ulp the spacing of float32 values
// at the loss (each evaluation is rounded to it), so an entry or a norm
// whose analytic and numeric derivatives differ by up to twice that is
// accepted too. An attention vector's small derivatives (a destination's
// own score moves its softmax only through LeakyReLU's kink) lie near it.
func checkGradLoss(t *testing.T, be backend.Backend, name string, x backend.Buffer, idx []int, analytic []float32, f func() float64) {
	t.Helper()
	l := float32(math.Abs(f()))
	checkGradRes(t, be, name, x, idx, analytic, f, float64(math.Nextafter32(l, float32(math.Inf(1)))-l))
}

// checkGradRes is checkGrad with the objective's resolution ulp (0: exact).
func checkGradRes(t *testing.T, be backend.Backend, name string, x backend.Buffer, idx []int, analytic []float32, f func() float64, ulp float64) {
	t.Helper()
	if len(idx) == 0 {
		t.Fatalf("%s: nothing to check", name)
	}
	scale := 0.0
	for _, i := range idx {
		scale = math.Max(scale, math.Abs(float64(analytic[i])))
	}
	if scale == 0 {
		t.Errorf("%s: analytic gradient is all zero", name)
	}
	floor := 0.1 * scale
	var diff2, norm2, res2 float64
	bad := 0
	ok := func(a, num float64, eps float32) bool {
		res := 2 * ulp / (2 * float64(eps))
		return math.Abs(a-num) <= fdTol*math.Max(math.Max(math.Abs(a), math.Abs(num)), floor)+res
	}
	for _, i := range idx {
		a := float64(analytic[i])
		eps := float32(fdEps)
		num := centralDiff(be, x, i, eps, f)
		if !ok(a, num, eps) {
			eps = fdEpsFine
			num = centralDiff(be, x, i, eps, f)
		}
		diff2 += (a - num) * (a - num)
		norm2 += a * a
		res2 += math.Pow(2*ulp/(2*float64(eps)), 2)
		if !ok(a, num, eps) {
			bad++
			if bad <= 5 {
				t.Errorf("%s[%d]: analytic %.6g, numeric %.6g", name, i, a, num)
			}
		}
	}
	if !(math.Sqrt(diff2) <= fdTol*math.Sqrt(norm2)+math.Sqrt(res2)) {
		t.Errorf("%s: relative norm error %.3g > %g", name, math.Sqrt(diff2/norm2), fdTol)
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d entries differ", name, bad, len(idx))
	}
}

// centralDiff is (f(x+eps) - f(x-eps)) / 2eps for element i of x, which it
// restores afterwards.
func centralDiff(be backend.Backend, x backend.Buffer, i int, eps float32, f func() float64) float64 {
	v := make([]float32, 1)
	be.Read(v, x, i)
	orig := v[0]
	be.Write(x, i, []float32{orig + eps})
	fp := f()
	be.Write(x, i, []float32{orig - eps})
	fm := f()
	be.Write(x, i, []float32{orig})
	return (fp - fm) / (2 * float64(eps))
}

// liveIdx is 0..n-1.
func liveIdx(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
