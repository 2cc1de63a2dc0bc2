// Package vec holds the small vector kernels of the CPU backend's row-wise
// ops: Axpy (y += a·x, the inner loop of aggregation), BiasAct (bias and
// ReLU), PhiloxWords (the Philox words of consecutive slots, for dropout)
// and DropApply (dropout from those words, with its mask). On amd64 with
// AVX2 and FMA they run in assembly; elsewhere, or with the purego build
// tag, in Go.
// Axpy computes each element the same way wherever it lies in the row
// (fused multiply-add on every element in assembly), so results do not
// depend on how rows are split; PhiloxWords is bit-identical to package rng,
// BiasAct and DropApply to their portable loops (BiasAct's NaNs are NaN).
package vec

// Axpy sets y[i] += a·x[i] for i < len(x); y must be at least as long as x.
func Axpy(a float32, x, y []float32) {
	if len(x) == 0 {
		return
	}
	y = y[:len(x)]
	axpy(a, x, y)
}

// axpyGo is the portable loop.
func axpyGo(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}
