// Package tolerance holds the checks by which tests hold a result to a
// reference within a bound: one value within a bound of a scale, a run's
// per-step losses within a bound per step, and slices of values element by
// element (slices.go). Every check fails on a NaN
// or an infinity on either side, where a check written as "difference >
// bound" lets a NaN pass (every comparison with a NaN is false).
package tolerance

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// Rel is the relative difference |got - want| / |want|: 0 when the two are
// equal and finite (0 against 0 included), +Inf when want is 0 and got a
// finite other value, NaN when either is NaN or want is infinite (the same
// infinity on both sides included).
func Rel(got, want float64) float64 {
	d := math.Abs(got - want)
	if d == 0 {
		return 0
	}
	return d / math.Abs(want)
}

// Within returns nil when got, want and scale are finite and |got - want|
// <= bound·scale, and otherwise an error giving both values and the miss.
// A bound of +Inf checks only that the values are finite, at any scale
// (0 included, where the product bound·scale would be NaN); a NaN or
// negative bound, or a negative scale, admits nothing.
func Within(got, want, scale, bound float64) error {
	d := math.Abs(got - want)
	switch {
	case !finite(got) || !finite(want):
		return fmt.Errorf("%v, want %v: not finite", got, want)
	case !finite(scale) || scale < 0:
		return fmt.Errorf("%v, want %v: the scale %v is not a finite value of at least 0", got, want, scale)
	case !(d <= limit(scale, bound)):
		return fmt.Errorf("%v, want %v: difference %.3g above %.3g", got, want, d, limit(scale, bound))
	}
	return nil
}

// limit is bound·scale for a finite scale of at least 0, +Inf where the
// bound is (Inf·0 is NaN) and NaN for a bound that is NaN or negative.
func limit(scale, bound float64) float64 {
	switch {
	case math.IsNaN(bound) || bound < 0:
		return math.NaN()
	case math.IsInf(bound, 1):
		return bound
	}
	return bound * scale
}

// Losses holds got[i] within bound(i) of want[i], relative to |want[i]|, for
// every step i (a bound of +Inf checks only that the losses are finite). It
// returns the largest relative difference of the finite steps (+Inf where
// one differs from a reference of 0), and an error for step counts that
// differ or naming the first step that misses.
func Losses(got, want []float32, bound func(step int) float64) (worst float64, err error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d steps, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if e := Within(g, w, math.Abs(w), bound(i)); e != nil && err == nil {
			err = fmt.Errorf("step %d: loss %w (relative %.2g, bound %g)", i, e, Rel(g, w), bound(i))
		}
		if r := Rel(g, w); r > worst {
			worst = r
		}
	}
	return worst, err
}

// Every is the bound b at every step.
func Every(b float64) func(int) float64 { return func(int) float64 { return b } }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Fails runs check against a testing.TB that records instead of failing
// and reports whether check called Error, Errorf, Fatal or Fatalf (a Fatal
// ends check, as it ends a test), with the first message. Tests of the
// comparison helpers use it to show that a planted NaN fails them.
func Fails(check func(tb testing.TB)) (msg string, failed bool) {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.msg, r.failed
}

// recorder is the testing.TB of Fails: the methods the helpers call, the
// rest left to the embedded nil interface (calling them panics).
type recorder struct {
	testing.TB
	msg    string
	failed bool
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Log(...any)          {}

func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.fail(fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) fail(msg string) {
	if !r.failed {
		r.msg, r.failed = msg, true
	}
}
