package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShapes are the matmuls of a SAGE step on products-sim (35,000
// destination rows, 100 input features, hidden 256) and a square-ish one.
var benchShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"4096x256x256", false, false, 4096, 256, 256},
	{"sage_fwd_35000x100x256", false, false, 35000, 256, 100},
	{"sage_bwd_data_35000x256x100", false, true, 35000, 100, 256},
	{"sage_bwd_weight_100x35000x256", true, false, 100, 256, 35000},
	{"products_bottom_weight_200x51495x256", true, false, 200, 256, 51495},
}

// benchThreads are 1 and 2 threads, and every processor where there are more.
func benchThreads() []int {
	if n := runtime.GOMAXPROCS(0); n > 2 {
		return []int{1, 2, n}
	}
	return []int{1, 2}
}

func benchOperands(m, n, k int) (a, b, c []float32) {
	r := rand.New(rand.NewPCG(5, 6))
	return randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
}

func lds(transA, transB bool, m, n, k int) (lda, ldb int) {
	lda, ldb = k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	return lda, ldb
}

// BenchmarkGemm reports GFLOP/s of this package for benchThreads, with
// each micro-kernel this CPU can run (the last of kernelVariants is the one
// in use).
func BenchmarkGemm(b *testing.B) {
	for _, kern := range kernelVariants()[1:] {
		b.Run("kernel="+kern, func(b *testing.B) {
			restore := useKernel(kern)
			defer restore()
			benchShapesThreads(b)
		})
	}
}

func benchShapesThreads(b *testing.B) {
	for _, s := range benchShapes {
		for _, threads := range benchThreads() {
			b.Run(fmt.Sprintf("%s/threads=%d", s.name, threads), func(b *testing.B) {
				a, bm, c := benchOperands(s.m, s.n, s.k)
				lda, ldb := lds(s.transA, s.transB, s.m, s.n, s.k)
				ctx := NewContext(threads, goRunner)
				for b.Loop() {
					if err := ctx.Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkGonumSgemm is the same with gonum's Sgemm (which uses every
// core it finds), for comparison.
func BenchmarkGonumSgemm(b *testing.B) {
	var impl gonum.Implementation
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, bm, c := benchOperands(s.m, s.n, s.k)
			lda, ldb := lds(s.transA, s.transB, s.m, s.n, s.k)
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.transA {
				ta = blas.Trans
			}
			if s.transB {
				tb = blas.Trans
			}
			for b.Loop() {
				impl.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
			}
			b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
