//go:build !purego

package vec

// biasActAVX2 is BiasAct on groups×8 elements; bias is nil without one.
//
//go:noescape
func biasActAVX2(x, bias, y *float32, groups int, relu bool)

// biasActBlocks applies BiasAct to the whole groups of 8 elements when AVX2
// is available and returns the number of elements done.
func biasActBlocks(x, bias []float32, relu bool, y []float32) int {
	if !hasFMA || len(x) < 8 || (bias == nil && !relu) {
		return 0
	}
	var b *float32
	if bias != nil {
		b = &bias[0]
	}
	groups := len(x) / 8
	biasActAVX2(&x[0], b, &y[0], groups, relu)
	return groups * 8
}
