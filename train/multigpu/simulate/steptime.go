package simulate

import (
	"fmt"
	"math"
	"slices"
)

// StepTimes is a single GPU's step time by batch: Ms[i] milliseconds for a
// step of Batch[i] seeds (Batch ascending), read between the points by
// linear interpolation and beyond them along the nearest segment.
type StepTimes struct {
	Batch []int
	Ms    []float64
}

// H100ProductsSim are the step times measured on an H100 for products-sim
// (replay, bfloat16 features and bottom layer, the whole graph resident).
func H100ProductsSim() StepTimes {
	return StepTimes{Batch: []int{256, 512, 1024, 2048}, Ms: []float64{0.230, 0.309, 0.436, 0.618}}
}

// Check rejects a table that cannot be interpolated, or whose times are
// not finite values above 0.
func (t StepTimes) Check() error {
	if len(t.Batch) < 2 || len(t.Batch) != len(t.Ms) || !slices.IsSorted(t.Batch) {
		return fmt.Errorf("simulate: step times need two or more points in ascending batch, have %v and %v", t.Batch, t.Ms)
	}
	for i := 1; i < len(t.Batch); i++ {
		if t.Batch[i] == t.Batch[i-1] {
			return fmt.Errorf("simulate: two step times at batch %d", t.Batch[i])
		}
	}
	for i, ms := range t.Ms {
		if t.Batch[i] < 1 || !(ms > 0 && ms <= math.MaxFloat64) {
			return fmt.Errorf("simulate: step times: %d:%v, want a batch of at least 1 seed and a finite time above 0 ms", t.Batch[i], ms)
		}
	}
	return nil
}

// At is the step time in ms at a batch of b seeds (at least the time the
// table gives a batch of none: a step's fixed cost).
func (t StepTimes) At(b float64) float64 {
	i := 1
	for i < len(t.Batch)-1 && b > float64(t.Batch[i]) {
		i++
	}
	x0, x1 := float64(t.Batch[i-1]), float64(t.Batch[i])
	ms := t.Ms[i-1] + (b-x0)*(t.Ms[i]-t.Ms[i-1])/(x1-x0)
	return max(ms, t.Fixed())
}

// Fixed is the step time the table extrapolates to a batch of no seeds:
// the part of a step that does not grow with its work (launches, the
// floors of small kernels).
func (t StepTimes) Fixed() float64 {
	x0, x1 := float64(t.Batch[0]), float64(t.Batch[1])
	return max(0, t.Ms[0]-x0*(t.Ms[1]-t.Ms[0])/(x1-x0))
}

// Scaled is the table scaled so that a step of b seeds takes ms (a step
// time measured at one batch, the shape of the curve kept).
func (t StepTimes) Scaled(b int, ms float64) StepTimes {
	f := ms / t.At(float64(b))
	out := StepTimes{Batch: slices.Clone(t.Batch), Ms: make([]float64, len(t.Ms))}
	for i, m := range t.Ms {
		out.Ms[i] = m * f
	}
	return out
}
