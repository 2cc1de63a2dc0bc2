package cuda

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

var cublasSonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

// cuBLAS constants.
const (
	cublasOpN             = 0
	cublasOpT             = 1
	cublasDefaultMath     = 0
	cublasTF32TensorMath  = 3
	cublasWorkspaceBytes  = 32 << 20
	cublasStatusSuccess   = 0
	cublasPointerModeHost = 0
	cudaR32F              = 0  // cudaDataType_t CUDA_R_32F
	cudaR16BF             = 14 // cudaDataType_t CUDA_R_16BF
	cublasCompute32F      = 68 // cublasComputeType_t CUBLAS_COMPUTE_32F
	cublasGemmDefault     = ^uintptr(0)
)

// cublasNames maps status codes to names (cublasGetStatusName is missing
// before cuBLAS 11.4).
var cublasNames = map[int]string{
	1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH",
	11: "CUBLAS_STATUS_MAPPING_ERROR", 13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

// cublas holds cuBLAS's entry points and one handle.
type cublas struct {
	lib    *library
	handle uintptr

	create, destroy, setStream, sgemm, setMath, setWorkspace, getVersion uintptr
	gemmEx                                                               uintptr // 0 when missing
}

func loadCublas(libDir string) (*cublas, error) {
	lib, err := openLibrary("cuBLAS (libcublas)", libDir, cublasSonames)
	if err != nil {
		return nil, err
	}
	c := &cublas{lib: lib}
	err = lib.symbols(map[string]*uintptr{
		"cublasCreate_v2":     &c.create,
		"cublasDestroy_v2":    &c.destroy,
		"cublasSetStream_v2":  &c.setStream,
		"cublasSgemm_v2":      &c.sgemm,
		"cublasSetMathMode":   &c.setMath,
		"cublasGetVersion_v2": &c.getVersion,
	})
	if err != nil {
		return nil, err
	}
	c.setWorkspace, _ = lib.sym("cublasSetWorkspace_v2")
	c.gemmEx, _ = lib.sym("cublasGemmEx")
	return c, nil
}

//go:uintptrescapes
func (c *cublas) call(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	return status(name, r)
}

// init creates the handle (the context must be current), binds it to
// stream, gives it a fixed workspace (so that it never allocates, which graph
// capture needs) and sets the math mode.
func (c *cublas) init(stream, workspace uintptr, workspaceBytes int, tf32 bool) error {
	if err := c.call("cublasCreate_v2", c.create, uintptr(unsafe.Pointer(&c.handle))); err != nil {
		return err
	}
	if err := c.call("cublasSetStream_v2", c.setStream, c.handle, stream); err != nil {
		return err
	}
	if c.setWorkspace != 0 && workspace != 0 {
		if err := c.call("cublasSetWorkspace_v2", c.setWorkspace, c.handle, workspace, uintptr(workspaceBytes)); err != nil {
			return err
		}
	}
	mode := cublasDefaultMath
	if tf32 {
		mode = cublasTF32TensorMath
	}
	return c.call("cublasSetMathMode", c.setMath, c.handle, uintptr(mode))
}

// version is cuBLAS's version number, e.g. 130000.
func (c *cublas) version() int {
	var v int32
	if c.call("cublasGetVersion_v2", c.getVersion, c.handle, uintptr(unsafe.Pointer(&v))) != nil {
		return 0
	}
	return int(v)
}

// gemmArgs holds alpha and beta on the heap for the duration of a call.
type gemmArgs struct{ alpha, beta float32 }

// sgemmRowMajor computes c = alpha·op(a)·op(b) + beta·c for row-major
// matrices: op(a) [m, k], op(b) [k, n], c [m, n]. cuBLAS is column-major, so
// it computes cᵀ = op(b)ᵀ·op(a)ᵀ on the same memory.
func (c *cublas) sgemmRowMajor(sc *gemmArgs, transA, transB bool, m, n, k int, a, b, cc uintptr) error {
	opA, lda, opB, ldb := rowMajor(transA, transB, m, n, k)
	r, _, _ := purego.SyscallN(c.sgemm, c.handle, opB, opA, uintptr(n), uintptr(m), uintptr(k),
		uintptr(unsafe.Pointer(&sc.alpha)), b, ldb, a, lda,
		uintptr(unsafe.Pointer(&sc.beta)), cc, uintptr(max(n, 1)))
	return status("cublasSgemm_v2", r)
}

// bf16GemmRowMajor is sgemmRowMajor with bfloat16 a and b, products and
// sums in float32 (cublasGemmEx, CUBLAS_COMPUTE_32F); c is float32, or
// bfloat16 (rounded) when halfC.
func (c *cublas) bf16GemmRowMajor(sc *gemmArgs, transA, transB bool, m, n, k int, a, b, cc uintptr, halfC bool) error {
	if c.gemmEx == 0 {
		return fmt.Errorf("cuda: this cuBLAS has no cublasGemmEx, which bfloat16 products need")
	}
	opA, lda, opB, ldb := rowMajor(transA, transB, m, n, k)
	cType := uintptr(cudaR32F)
	if halfC {
		cType = cudaR16BF
	}
	r, _, _ := purego.SyscallN(c.gemmEx, c.handle, opB, opA, uintptr(n), uintptr(m), uintptr(k),
		uintptr(unsafe.Pointer(&sc.alpha)), b, cudaR16BF, ldb, a, cudaR16BF, lda,
		uintptr(unsafe.Pointer(&sc.beta)), cc, cType, uintptr(max(n, 1)), cublasCompute32F, cublasGemmDefault)
	return status("cublasGemmEx", r)
}

// rowMajor gives the column-major operations and leading dimensions of a
// row-major product op(a) [m, k] · op(b) [k, n].
func rowMajor(transA, transB bool, m, n, k int) (opA, lda, opB, ldb uintptr) {
	opA, lda = cublasOpN, uintptr(max(k, 1))
	if transA {
		opA, lda = cublasOpT, uintptr(max(m, 1))
	}
	opB, ldb = cublasOpN, uintptr(max(n, 1))
	if transB {
		opB, ldb = cublasOpT, uintptr(max(k, 1))
	}
	return opA, lda, opB, ldb
}

// status is nil for CUBLAS_STATUS_SUCCESS, else the named error.
func status(call string, r uintptr) error {
	code := int(int32(r))
	if code == cublasStatusSuccess {
		return nil
	}
	n, ok := cublasNames[code]
	if !ok {
		n = fmt.Sprintf("CUBLAS_STATUS_%d", code)
	}
	return &Error{Call: call, Code: code, Name: n}
}
