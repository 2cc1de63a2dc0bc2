package vec

import "math"

// DropApply applies dropout to y in place from its Philox words and records
// the mask: element j is kept iff words[j] >= thr, then y[j] = y[j]·scale,
// else y[j] = +0 whatever it was (NaN and Inf too); mask[j] is 1 where kept
// and, when relu, y[j] > 0 after (the ReLU's gate), else 0. words and mask
// must be at least as long as y.
func DropApply(words []uint32, thr uint32, scale float32, relu bool, y []float32, mask []uint8) {
	n := len(y)
	words, mask = words[:n], mask[:n]
	done := dropBlocks(words, thr, scale, relu, y, mask)
	dropGo(words[done:], thr, scale, relu, y[done:], mask[done:])
}

// dropGo is DropApply's portable loop, branch-free (the words are random).
func dropGo(words []uint32, thr uint32, scale float32, relu bool, y []float32, mask []uint8) {
	words, mask = words[:len(y)], mask[:len(y)]
	for j := range y {
		keep := uint32((uint64(words[j])-uint64(thr))>>63) ^ 1
		y[j] = math.Float32frombits(math.Float32bits(y[j]*scale) & -keep)
		if relu {
			keep &= Positive(y[j])
		}
		mask[j] = uint8(keep & 1)
	}
}

// Positive is all ones when v > 0 and zero otherwise (also for NaN).
func Positive(v float32) uint32 {
	b := math.Float32bits(v)
	// v > 0 iff the sign is clear and the bits are non-zero and not NaN.
	pos := uint32((uint64(b)-1)>>63) ^ 1          // b != 0
	pos &= (b >> 31) ^ 1                          // sign clear
	pos &= uint32((uint64(b) - 0x7f800001) >> 63) // below the NaN range
	return -pos
}
