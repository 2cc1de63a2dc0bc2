package npy

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestInt64s(t *testing.T) {
	for _, c := range []struct {
		in   any
		want []int64
	}{
		{[]int64{-1, 5}, []int64{-1, 5}},
		{[]int32{-7, 2}, []int64{-7, 2}},
		{[]uint8{255, 0}, []int64{255, 0}},
		{[]uint64{math.MaxInt64}, []int64{math.MaxInt64}},
		{[]bool{true, false}, []int64{1, 0}},
	} {
		got, err := Int64s(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Int64s(%T %v) = %v, %v; want %v", c.in, c.in, got, err, c.want)
		}
	}
	if _, err := Int64s([]uint64{1, math.MaxInt64 + 1}); err == nil || !strings.Contains(err.Error(), "element 1") {
		t.Errorf("uint64 past int64: %v, want an error naming element 1", err)
	}
	if _, err := Int64s([]float32{1}); err == nil || !strings.Contains(err.Error(), "have float32") {
		t.Errorf("float32 ids: %v, want an error naming float32", err)
	}
}

func TestFloats(t *testing.T) {
	f32, err := Float32s([]float64{0.1, -2})
	if err != nil || !slices.Equal(f32, []float32{0.1, -2}) {
		t.Errorf("Float32s(float64) = %v, %v", f32, err)
	}
	if f32, err = Float32s([]int16{-3, 4}); err != nil || !slices.Equal(f32, []float32{-3, 4}) {
		t.Errorf("Float32s(int16) = %v, %v", f32, err)
	}
	f64, err := Float64s([]float32{0.5, 3})
	if err != nil || !slices.Equal(f64, []float64{0.5, 3}) {
		t.Errorf("Float64s(float32) = %v, %v", f64, err)
	}
	if _, err := Float64s([]string{"x"}); err == nil || !strings.Contains(err.Error(), "want a numeric array, have []string") {
		t.Errorf("Float64s(strings): %v", err)
	}
}

func TestShapeString(t *testing.T) {
	for _, c := range []struct {
		shape []int64
		want  string
	}{{nil, "()"}, {[]int64{3}, "(3,)"}, {[]int64{3, 4}, "(3, 4)"}} {
		if got := ShapeString(c.shape); got != c.want {
			t.Errorf("ShapeString(%v) = %q, want %q", c.shape, got, c.want)
		}
	}
}
