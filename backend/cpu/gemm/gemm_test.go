package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// goRunner runs every part on its own goroutine.
func goRunner(parts int, fn func(int)) {
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i)
		}()
	}
	wg.Wait()
}

// refGemm is C = alpha·op(A)·op(B) + beta·C in float64, with the scale
// Σ|terms| per element.
func refGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, scale []float64) {
	want, scale = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, mag float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
				mag += math.Abs(float64(av) * float64(bv))
			}
			s, mag = float64(alpha)*s, math.Abs(float64(alpha))*mag
			if beta != 0 {
				s += float64(beta) * float64(c[i*ldc+j])
				mag += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			want[i*n+j], scale[i*n+j] = s, mag
		}
	}
	return want, scale
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*r.Float64() - 1)
	}
	return s
}

// TestSgemm compares against the float64 reference on random shapes with
// edge sizes, padded strides, all transpose combinations and thread counts.
func TestSgemm(t *testing.T) {
	for _, name := range kernelVariants() {
		t.Run(name, func(t *testing.T) {
			restore := useKernel(name)
			defer restore()
			testSgemm(t)
		})
	}
}

func testSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 5, 6, 7, 16, 17, 33, 97}
	ctxs := map[int]*Context{1: NewContext(1, nil), 2: NewContext(2, goRunner), 3: NewContext(3, goRunner)}
	for iter := range 120 {
		m, n := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]
		k := sizes[r.IntN(len(sizes))]
		if iter%10 == 0 {
			k = 250 + r.IntN(300) // crosses the kc block boundary
		}
		switch iter % 15 {
		case 0:
			m = 300 + r.IntN(100) // above fewRows: shared B panels, several mc blocks
		case 7:
			m = 190 + r.IntN(30) // fewRows path with several row panels
		case 3:
			m = fewRows - r.IntN(mr) // fewRows path whose last panel is partial
			k = kc + 1 + r.IntN(kc)
		case 5:
			// fewRows path over more than one run of k blocks, its columns
			// enough groups at 3 threads for the shared packing
			m, n = 40+r.IntN(60), 2*nr+1+r.IntN(nr)
			k = fewRunBlocks*kc + 1 + r.IntN(kc)
		case 11:
			n = nc + 1 + r.IntN(40) // two nc blocks
		}
		transA, transB := r.IntN(2) == 1, r.IntN(2) == 1
		alpha := []float32{1, -0.75}[r.IntN(2)]
		beta := []float32{0, 1, 0.5}[r.IntN(3)]
		pad := r.IntN(3)
		lda, ldb, ldc := k+pad, n+pad, n+pad
		ar, br := m, k
		if transA {
			lda, ar = m+pad, k
		}
		if transB {
			ldb, br = k+pad, n
		}
		a := randSlice(r, ar*lda)
		b := randSlice(r, br*ldb)
		c0 := randSlice(r, m*ldc)
		if beta == 0 {
			for i := range c0 {
				c0[i] = float32(math.NaN()) // must not be read
			}
		}
		want, scale := refGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc)
		var first []float32
		for threads := 1; threads <= 3; threads++ {
			c := append([]float32(nil), c0...)
			if err := ctxs[threads].Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("m=%d n=%d k=%d tA=%v tB=%v alpha=%g beta=%g pad=%d threads=%d", m, n, k, transA, transB, alpha, beta, pad, threads)
			checkResult(t, name, c, want, scale, m, n, ldc, c0)
			if threads == 1 {
				first = c
			} else {
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
						t.Fatalf("%s: element %d differs from 1 thread (%g vs %g)", name, i, c[i], first[i])
					}
				}
			}
		}
	}
}

func checkResult(t *testing.T, name string, c []float32, want, scale []float64, m, n, ldc int, c0 []float32) {
	t.Helper()
	for i := range m {
		for j := range ldc {
			got := float64(c[i*ldc+j])
			if j >= n { // padding untouched
				if math.Float32bits(c[i*ldc+j]) != math.Float32bits(c0[i*ldc+j]) {
					t.Fatalf("%s: padding at (%d, %d) changed", name, i, j)
				}
				continue
			}
			w, s := want[i*n+j], scale[i*n+j]
			if !(math.Abs(got-w) <= 1e-5*s+1e-30) {
				t.Fatalf("%s: at (%d, %d) got %g, want %g (scale %g)", name, i, j, got, w, s)
			}
		}
	}
}

// TestSgemmErrors checks that bad sizes are reported, not panics.
func TestSgemmErrors(t *testing.T) {
	ctx := NewContext(1, nil)
	a, b, c := make([]float32, 6), make([]float32, 6), make([]float32, 4)
	if err := ctx.Sgemm(false, false, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	bad := []struct {
		name string
		err  error
	}{
		{"short A", ctx.Sgemm(false, false, 2, 2, 4, 1, a, 4, b, 2, 0, c, 2)},
		{"short C", ctx.Sgemm(false, false, 3, 2, 2, 1, a, 2, b, 2, 0, c, 2)},
		{"lda < k", ctx.Sgemm(false, false, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2)},
		{"negative", ctx.Sgemm(false, false, -1, 2, 3, 1, a, 3, b, 2, 0, c, 2)},
	}
	for _, tc := range bad {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestKernels compares every micro-kernel this CPU can run with the Go one
// on full tiles (the assembly kernels must agree with each other bit for
// bit), and checks that none writes outside its tile.
func TestKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const ldc = nr + 5
	kernels := availableKernels()
	if kernels == nil {
		kernels = map[string]func(k int, a, b, c []float32, ldc int, alpha, beta float32){}
	}
	kernels["go-direct"] = func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
		kernelGoDirect(k, unpackA(a, k), k+3, b, c, ldc, alpha, beta)
	}
	for _, k := range []int{1, 2, 3, 4, 5, 8, 9, 256} {
		for _, ab := range [][2]float32{{1, 0}, {1, 1}, {-2, 0.5}} {
			a, b := randSlice(r, k*mr), randSlice(r, k*nr)
			c0 := randSlice(r, mr*ldc)
			want := append([]float32(nil), c0...)
			kernelGo(k, a, b, want, ldc, ab[0], ab[1])
			var asm []float32
			for name, kern := range kernels {
				got := append([]float32(nil), c0...)
				kern(k, a, b, got, ldc, ab[0], ab[1])
				checkTile(t, fmt.Sprintf("%s k=%d alpha=%g beta=%g", name, k, ab[0], ab[1]), got, want, c0, ldc, k)
				if strings.HasPrefix(name, "go") {
					continue
				}
				if asm == nil {
					asm = got
				} else if !slices.Equal(asm, got) {
					t.Fatalf("%s k=%d: differs in bits from another assembly kernel", name, k)
				}
			}
		}
	}
}

// unpackA turns a packed mr-row panel of depth k into row-major rows with
// stride k+3.
func unpackA(a []float32, k int) []float32 {
	lda := k + 3
	rows := make([]float32, mr*lda)
	for p := range k {
		for i := range mr {
			rows[i*lda+p] = a[p*mr+i]
		}
	}
	return rows
}

func checkTile(t *testing.T, name string, got, want, c0 []float32, ldc, k int) {
	t.Helper()
	for i := range want {
		if i%ldc >= nr {
			if got[i] != c0[i] {
				t.Fatalf("%s: kernel wrote outside the tile at %d", name, i)
			}
			continue
		}
		if d := math.Abs(float64(want[i] - got[i])); d > 1e-5*(1+math.Abs(float64(want[i])))*math.Sqrt(float64(k)) {
			t.Fatalf("%s: element %d: kernel %g, Go %g", name, i, got[i], want[i])
		}
	}
}
