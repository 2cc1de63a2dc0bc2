//go:build !amd64 || purego

package gemm

// kernel is the micro-kernel in use; see kernelGo.
func kernel(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	kernelGo(k, a, b, c, ldc, alpha, beta)
}

// hasDirect is false: without assembly, A is always packed.
func hasDirect() bool { return false }

// kernelDirect is kernel with A read in place; see kernelGoDirect.
func kernelDirect(k int, a []float32, lda int, b, c []float32, ldc int, alpha, beta float32) {
	kernelGoDirect(k, a, lda, b, c, ldc, alpha, beta)
}
