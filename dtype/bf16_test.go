package dtype

import (
	"math"
	"testing"
)

// TestBF16: rounding to nearest with ties to even, and exact round trips of
// values bfloat16 holds.
func TestBF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{1 + 1.0/256, 0x3f80},        // halfway, ties to the even 1.0
		{1 + 3.0/256, 0x3f82},        // halfway, ties to the even 1+2/128
		{1 + 1.0/256 + 1e-6, 0x3f81}, // just past halfway rounds up
		{float32(math.Inf(1)), 0x7f80},
	} {
		if got := BF16Bits(c.in); got != c.want {
			t.Errorf("BF16Bits(%v) = %#x, want %#x", c.in, got, c.want)
		}
	}
	if !math.IsNaN(float64(BF16Float(BF16Bits(float32(math.NaN()))))) {
		t.Error("NaN did not stay NaN")
	}
	for _, v := range []float32{0, 1, -3.5, 0.15625, 1e30} {
		h := BF16Bits(v)
		if BF16Bits(BF16Float(h)) != h {
			t.Errorf("%v: %#x does not round-trip", v, h)
		}
	}
}
