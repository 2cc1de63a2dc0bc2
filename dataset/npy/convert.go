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
		return convertInts(s), nil
	case []int16:
		return convertInts(s), nil
	case []int8:
		return convertInts(s), nil
	case []uint32:
		return convertInts(s), nil
	case []uint16:
		return convertInts(s), nil
	case []uint8:
		return convertInts(s), nil
	case []uint64:
		out := make([]int64, len(s))
		for i, v := range s {
			if v > math.MaxInt64 {
				return nil, fmt.Errorf("element %d = %d does not fit int64", i, v)
			}
			out[i] = int64(v)
		}
		return out, nil
	case []bool:
		out := make([]int64, len(s))
		for i, v := range s {
			if v {
				out[i] = 1
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want an integer array, have %s", typeName(data))
}

// convertInts widens a narrower integer slice to int64.
func convertInts[T int8 | int16 | int32 | uint8 | uint16 | uint32](s []T) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v)
	}
	return out
}

// Float32s converts a numeric array returned by Read to []float32 (float64
// values are rounded to nearest). A []float32 is returned as is.
func Float32s(data any) ([]float32, error) {
	switch s := data.(type) {
	case []float32:
		return s, nil
	case []float64:
		out := make([]float32, len(s))
		for i, v := range s {
			out[i] = float32(v)
		}
		return out, nil
	case []bool:
		out := make([]float32, len(s))
		for i, v := range s {
			if v {
				out[i] = 1
			}
		}
		return out, nil
	}
	ints, err := Int64s(data)
	if err != nil {
		return nil, fmt.Errorf("want a numeric array, have %s", typeName(data))
	}
	out := make([]float32, len(ints))
	for i, v := range ints {
		out[i] = float32(v)
	}
	return out, nil
}

// Float64s converts a numeric array returned by Read to []float64.
func Float64s(data any) ([]float64, error) {
	switch s := data.(type) {
	case []float64:
		return s, nil
	case []float32:
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = float64(v)
		}
		return out, nil
	}
	ints, err := Int64s(data)
	if err != nil {
		return nil, fmt.Errorf("want a numeric array, have %s", typeName(data))
	}
	out := make([]float64, len(ints))
	for i, v := range ints {
		out[i] = float64(v)
	}
	return out, nil
}

// typeName names the element type of a slice returned by Read.
func typeName(data any) string {
	switch data.(type) {
	case []float32:
		return "float32"
	case []float64:
		return "float64"
	case []int64:
		return "int64"
	case []int32:
		return "int32"
	case []int16:
		return "int16"
	case []int8:
		return "int8"
	case []uint64:
		return "uint64"
	case []uint32:
		return "uint32"
	case []uint16:
		return "uint16"
	case []uint8:
		return "uint8"
	case []bool:
		return "bool"
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
