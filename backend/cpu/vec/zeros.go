package vec

// ZeroRun is the length of the run of zeros (of either sign) that x starts
// with, counted in whole groups of 8 elements: a multiple of 8, at most
// len(x); the group that ends the run holds a nonzero, or x ends in fewer
// than 8. On amd64 with AVX2 it tests 8 elements an instruction.
func ZeroRun(x []float32) int {
	if len(x) < 8 {
		return 0
	}
	return zeroRun(x)
}

// zeroRunGo is the portable loop.
func zeroRunGo(x []float32) int {
	k := 0
	for ; k+8 <= len(x); k += 8 {
		for _, v := range x[k : k+8] {
			if v != 0 {
				return k
			}
		}
	}
	return k
}
