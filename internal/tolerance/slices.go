package tolerance

import (
	"fmt"
	"math"
)

// Float is the element type of the slices the checks compare.
type Float interface{ ~float32 | ~float64 }

// Finite returns nil when every value of v is finite, and otherwise an
// error naming the first value that is not and how many are not.
func Finite[T Float](v []T) error {
	first, bad := -1, 0
	for i, x := range v {
		if !finite(float64(x)) {
			if bad++; first < 0 {
				first = i
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d values are not finite, the first [%d] = %v", bad, len(v), first, v[first])
	}
	return nil
}

// Worst is the largest relative difference of got from want,
// |got[i] - want[i]| / max(|want[i]|, floor) over every i (0 where the two
// are equal, +Inf where they differ against a scale of 0), and an error
// where the lengths differ or a value on either side is not finite: Worst
// has no value that a NaN could hide behind.
func Worst[T Float](got, want []T, floor float64) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	if err := Finite(got); err != nil {
		return 0, err
	}
	if err := Finite(want); err != nil {
		return 0, fmt.Errorf("reference: %w", err)
	}
	worst := 0.0
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - float64(w)); d > 0 {
			worst = max(worst, d/max(math.Abs(float64(w)), floor))
		}
	}
	return worst, nil
}

// Close returns nil when got and want have one length, every value is
// finite and each got[i] is within bound of want[i], relative to
// max(|want[i]|, floor); otherwise an error with the largest difference.
func Close[T Float](got, want []T, floor, bound float64) error {
	worst, err := Worst(got, want, floor)
	switch {
	case err != nil:
		return err
	case !(worst <= bound):
		return fmt.Errorf("values differ by up to %.3g relative, above %.3g", worst, bound)
	}
	return nil
}

// Apart returns nil when got and want have one length, every value is
// finite and some got[i] differs from want[i] by least or more, relative
// to max(|want[i]|, floor): the check a test makes to show that what it
// compares could differ (a NaN does not count as a difference).
func Apart[T Float](got, want []T, floor, least float64) error {
	worst, err := Worst(got, want, floor)
	switch {
	case err != nil:
		return err
	case !(worst >= least):
		return fmt.Errorf("values differ by at most %.3g relative, below %.3g", worst, least)
	}
	return nil
}
