package npy

import (
	"fmt"
	"math"
)

// Int64s converts an integer (or bool) array returned by Read (or by an
// npz archive's Read) to []int64. Floating-point arrays are rejected: ids
// and counts must be stored as integers.
func Int64s(data any) ([]int64, error) {
	switch s := data.(type) {
	case []int64:
		return s, nil
	case []int32:
		return convert[int64](s), nil
	case []int16:
		return convert[int64](s), nil
	case []int8:
		return convert[int64](s), nil
	case []uint32:
		return convert[int64](s), nil
	case []uint16:
		return convert[int64](s), nil
	case []uint8:
		return convert[int64](s), nil
	case []uint64:
		for i, v := range s {
			if v > math.MaxInt64 {
				return nil, fmt.Errorf("element %d = %d does not fit int64", i, v)
			}
		}
		return convert[int64](s), nil
	case []bool:
		return fromBools[int64](s), nil
	}
	return nil, fmt.Errorf("want an integer array, have %s", typeName(data))
}

// Float32s converts a numeric array returned by Read to []float32 (float64
// values are rounded to nearest). A []float32 is returned as is.
func Float32s(data any) ([]float32, error) { return floats[float32](data) }

// Float64s converts a numeric array returned by Read to []float64. A
// []float64 is returned as is.
func Float64s(data any) ([]float64, error) { return floats[float64](data) }

// floats converts a numeric array returned by Read to []D; a []D is
// returned as is.
func floats[D float32 | float64](data any) ([]D, error) {
	switch s := data.(type) {
	case []D:
		return s, nil
	case []float64:
		return convert[D](s), nil
	case []float32:
		return convert[D](s), nil
	}
	ints, err := Int64s(data)
	if err != nil {
		return nil, fmt.Errorf("want a numeric array, have %s", typeName(data))
	}
	return convert[D](ints), nil
}

// number is every numeric element type an array may hold.
type number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// convert converts each element of s to D, as Go converts one value.
func convert[D, S number](s []S) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = D(v)
	}
	return out
}

// fromBools is s as 0s and 1s.
func fromBools[D number](s []bool) []D {
	out := make([]D, len(s))
	for i, v := range s {
		if v {
			out[i] = 1
		}
	}
	return out
}

// typeName names the element type of a slice returned by Read.
func typeName(data any) string {
	if t, _, err := arrayOf(data); err == nil {
		return t.name()
	}
	return fmt.Sprintf("%T", data)
}

// ShapeString renders a shape as numpy prints it: (3, 4).
func ShapeString(shape []int64) string {
	s := "("
	for i, d := range shape {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(d)
	}
	if len(shape) == 1 {
		s += ","
	}
	return s + ")"
}
