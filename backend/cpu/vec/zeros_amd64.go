//go:build !purego

package vec

// zeroRunAVX2 is ZeroRun over groups whole groups of 8 at x.
//
//go:noescape
func zeroRunAVX2(x *float32, groups int) int

func zeroRun(x []float32) int {
	if !hasFMA {
		return zeroRunGo(x)
	}
	return zeroRunAVX2(&x[0], len(x)/8)
}
