//go:build !purego

package gemm

import "unsafe"

// availableKernels lists the assembly micro-kernels this CPU can run.
func availableKernels() map[string]func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	ks := map[string]func(k int, a, b, c []float32, ldc int, alpha, beta float32){}
	if hasAVX2 {
		ks["avx2"] = func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
			kernelAVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
			kernelAVX2(k, &a[0], &b[16], &c[16], ldc, alpha, beta)
		}
	}
	if hasAVX512 {
		ks["avx512"] = func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
			kernelAVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}
	}
	// Direct variants read A(i, p) at a[i·lda+p]: unpack the panel first.
	for name, direct := range map[string]func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32){
		"avx2-direct": func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32) {
			kernelAVX2D(k, a, lda, b, c, ldc, alpha, beta)
			kernelAVX2D(k, a, lda, (*float32)(unsafe.Add(unsafe.Pointer(b), 64)), (*float32)(unsafe.Add(unsafe.Pointer(c), 64)), ldc, alpha, beta)
		},
		"avx512-direct": kernelAVX512D,
	} {
		if name == "avx512-direct" && !hasAVX512 || !hasAVX2 {
			continue
		}
		ks[name] = func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
			direct(k, &unpackA(a, k)[0], k+3, &b[0], &c[0], ldc, alpha, beta)
		}
	}
	return ks
}

// kernelVariants names the kernel choices Sgemm can run with on this CPU.
func kernelVariants() []string {
	v := []string{"go"}
	if hasAVX2 {
		v = append(v, "avx2")
	}
	if hasAVX512 {
		v = append(v, "avx512")
	}
	return v
}

// useKernel makes Sgemm use the named micro-kernel and returns a function
// that restores the detected choice. Tests only (not concurrent).
func useKernel(name string) (restore func()) {
	a2, a5 := hasAVX2, hasAVX512
	hasAVX2 = a2 && name != "go"
	hasAVX512 = a5 && name == "avx512"
	return func() { hasAVX2, hasAVX512 = a2, a5 }
}
