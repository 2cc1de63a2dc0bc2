package cpu

import (
	"math"
	"testing"
)

func TestPositive(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1e-45, -1e-45, inf, -inf, nan, -nan, 3.4e38, math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff)} {
		want := uint32(0)
		if v > 0 {
			want = ^uint32(0)
		}
		if got := positive(v); got != want {
			t.Errorf("positive(%g, bits %08x) = %08x, want %08x", v, math.Float32bits(v), got, want)
		}
	}
}
