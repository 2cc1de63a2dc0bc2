//go:build !amd64 || purego

package gemm

// availableKernels lists the assembly micro-kernels (none on this build).
func availableKernels() map[string]func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	return nil
}

// kernelVariants names the kernel choices Sgemm can run with.
func kernelVariants() []string { return []string{"go"} }

// useKernel is a no-op: only the Go kernel exists.
func useKernel(string) (restore func()) { return func() {} }
