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

	create, destroy, setStream, sgemm, sgemmStrided, setMath, setWorkspace, getVersion uintptr
	gemmEx                                                                             uintptr // 0 when missing
}

func loadCublas(libDir string) (*cublas, error) {
	lib, err := openLibrary("cuBLAS (libcublas)", libDir, cublasSonames)
	if err != nil {
		return nil, err
	}
	c := &cublas{lib: lib}
	err = lib.symbols(map[string]*uintptr{
		"cublasCreate_v2":           &c.create,
		"cublasDestroy_v2":          &c.destroy,
		"cublasSetStream_v2":        &c.setStream,
		"cublasSgemm_v2":            &c.sgemm,
		"cublasSgemmStridedBatched": &c.sgemmStrided,
		"cublasSetMathMode":         &c.setMath,
		"cublasGetVersion_v2":       &c.getVersion,
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
	_, lda, _, ldb := rowMajor(transA, transB, m, n, k)
	return c.sgemmRowMajorLd(sc, transA, transB, m, n, k, strided{ptr: a, ld: int(lda)}, strided{ptr: b, ld: int(ldb)},
		strided{ptr: cc, ld: max(n, 1)})
}

// sgemmRowMajorLd is sgemmRowMajor with the operands' leading dimensions
// given (their strides unused): products of views into wider matrices.
func (c *cublas) sgemmRowMajorLd(sc *gemmArgs, transA, transB bool, m, n, k int, a, b, cc strided) error {
	opA, _, opB, _ := rowMajor(transA, transB, m, n, k)
	r, _, _ := purego.SyscallN(c.sgemm, c.handle, opB, opA, uintptr(n), uintptr(m), uintptr(k),
		uintptr(unsafe.Pointer(&sc.alpha)), b.ptr, uintptr(b.ld), a.ptr, uintptr(a.ld),
		uintptr(unsafe.Pointer(&sc.beta)), cc.ptr, uintptr(cc.ld))
	return status("cublasSgemm_v2", r)
}

// strided is one operand of a strided batched product: its address, its
// leading dimension (a row-major row's stride) and the stride from one
// batch's matrix to the next, in elements.
type strided struct {
	ptr        uintptr
	ld, stride int
}

// at is batch i's matrix of s (float32 elements).
func (s strided) at(i int) strided {
	return strided{ptr: s.ptr + uintptr(i*s.stride*4), ld: s.ld, stride: s.stride}
}

// sgemmStridedRowMajor computes batch products c_i = op(a_i)·op(b_i) (no
// accumulation) of row-major matrices op(a_i) [m, k], op(b_i) [k, n], c_i
// [m, n] at a.ptr + i·a.stride and so on: the column-major cᵀ = op(b)ᵀ·op(a)ᵀ
// on the same memory, as sgemmRowMajor.
func (c *cublas) sgemmStridedRowMajor(sc *gemmArgs, transA, transB bool, m, n, k int, a, b, cc strided, batch int) error {
	opA, _, opB, _ := rowMajor(transA, transB, m, n, k)
	r, _, _ := purego.SyscallN(c.sgemmStrided, c.handle, opB, opA, uintptr(n), uintptr(m), uintptr(k),
		uintptr(unsafe.Pointer(&sc.alpha)), b.ptr, uintptr(b.ld), uintptr(b.stride), a.ptr, uintptr(a.ld), uintptr(a.stride),
		uintptr(unsafe.Pointer(&sc.beta)), cc.ptr, uintptr(cc.ld), uintptr(cc.stride), uintptr(batch))
	return status("cublasSgemmStridedBatched", r)
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
