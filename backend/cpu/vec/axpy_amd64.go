//go:build !purego

package vec

import "golang.org/x/sys/cpu"

// hasFMA selects the assembly loop (AVX2 and FMA, fixed at start-up).
var hasFMA = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// axpyFMA is y[i] = fma(a, x[i], y[i]) for i < n, n >= 1.
//
//go:noescape
func axpyFMA(a float32, x, y *float32, n int)

func axpy(a float32, x, y []float32) {
	if !hasFMA {
		axpyGo(a, x, y)
		return
	}
	axpyFMA(a, &x[0], &y[0], len(x))
}
