//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

// Micro-kernels available on this CPU, fixed at start-up from its features
// (x/sys/cpu also checks that the OS saves the YMM/ZMM state).
var (
	hasAVX2   = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F
)

// kernelAVX2 computes a 6×16 tile: kernelGo restricted to the 16 columns of
// the packed B panel (rows nr floats apart) that start at b. k >= 1.
//
//go:noescape
func kernelAVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)

// kernelAVX512 is kernelGo for the full 6×32 tile. k >= 1.
//
//go:noescape
func kernelAVX512(k int, a, b, c *float32, ldc int, alpha, beta float32)

// kernelAVX512D is kernelAVX512 with A read in place (row i at a + i·lda).
//
//go:noescape
func kernelAVX512D(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)

// kernelAVX2D is kernelAVX2 with A read in place (row i at a + i·lda).
//
//go:noescape
func kernelAVX2D(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)

// hasDirect reports whether kernelDirect runs in assembly; only then does
// reading A in place beat packing it.
func hasDirect() bool { return hasAVX2 }

// kernelDirect is kernel with the 6-row A panel read in place:
// A(i, p) = a[i·lda+p] for p < k <= kc.
func kernelDirect(k int, a []float32, lda int, b, c []float32, ldc int, alpha, beta float32) {
	if !hasAVX2 || k < 1 {
		kernelGoDirect(k, a, lda, b, c, ldc, alpha, beta)
		return
	}
	_ = a[(mr-1)*lda+k-1]
	_ = b[k*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	if hasAVX512 {
		kernelAVX512D(k, &a[0], lda, &b[0], &c[0], ldc, alpha, beta)
		return
	}
	kernelAVX2D(k, &a[0], lda, &b[0], &c[0], ldc, alpha, beta)
	kernelAVX2D(k, &a[0], lda, &b[16], &c[16], ldc, alpha, beta)
}

// kernel is the micro-kernel in use; see kernelGo.
func kernel(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	if !hasAVX2 || k < 1 {
		kernelGo(k, a, b, c, ldc, alpha, beta)
		return
	}
	// Bounds the assembly relies on (a failed check panics here, not there).
	_ = a[k*mr-1]
	_ = b[k*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	if hasAVX512 {
		kernelAVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		return
	}
	kernelAVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
	kernelAVX2(k, &a[0], &b[16], &c[16], ldc, alpha, beta)
}
