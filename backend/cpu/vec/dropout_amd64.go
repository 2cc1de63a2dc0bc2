//go:build !purego

package vec

// dropAVX2 is DropApply on groups×8 elements; keepAll is all ones without
// the ReLU's gate, zero with it.
//
//go:noescape
func dropAVX2(y *float32, words *uint32, mask *uint8, groups int, thr uint32, scale float32, keepAll uint32)

// dropBlocks applies DropApply to the whole groups of 8 elements when AVX2
// is available and returns the number of elements done.
func dropBlocks(words []uint32, thr uint32, scale float32, relu bool, y []float32, mask []uint8) int {
	if !hasFMA || len(y) < 8 {
		return 0
	}
	keepAll := ^uint32(0)
	if relu {
		keepAll = 0
	}
	groups := len(y) / 8
	dropAVX2(&y[0], &words[0], &mask[0], groups, thr, scale, keepAll)
	return groups * 8
}
