package dtype

import "math"

// ToBF16 rounds float32 values to bfloat16 (round to nearest, ties to
// even; NaN stays NaN), as uint16 bit patterns: the top half of the
// float32's bits.
func ToBF16(src []float32) []uint16 {
	out := make([]uint16, len(src))
	for i, v := range src {
		out[i] = BF16Bits(v)
	}
	return out
}

// BF16Bits is one float32 rounded to bfloat16's bits.
func BF16Bits(v float32) uint16 {
	b := math.Float32bits(v)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return uint16(b>>16) | 0x40 // a quiet NaN
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BF16Float is the float32 value of bfloat16 bits.
func BF16Float(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
