package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/backendtest"
)

// TestConformanceTF32x3 runs the suite with the Linear ops on the 3xTF32
// tensor-core kernels (where the shapes allow): they must meet the float32
// tolerances.
func TestConformanceTF32x3(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return openTest(t, Options{TF32x3: true}) })
}

// tcShape is a tensor-core test case: capacity and live rows, and the
// widths of the product (multiples of 4; not of the tile sizes).
type tcShape struct{ cap, live, in, out int }

var tcShapes = []tcShape{
	{1, 1, 4, 4}, {300, 257, 100, 256}, {130, 129, 36, 44}, {2600, 2500, 200, 132}, {64, 0, 8, 12},
	{700, 700, 512, 256}, {3000, 2049, 260, 8},
}

// tcTolerance is the bound on |got - want| / Σ|terms|: far below TF32's
// error (about 5e-4 per product), near float32's.
const tcTolerance = 1e-5

// TestTensorGemm: the three Linear products on the tensor-core kernels,
// against float64 references, with live rows below the
// capacity, accumulation, outputs that are views with live data after them
// (left alone) and live counts of zero.
func TestTensorGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	b := openTest(t, Options{TF32x3: true})
	for _, s := range tcShapes {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("%+v accumulate=%t", s, acc)
			x, w, dy := randF32(r, s.cap*s.in), randF32(r, s.in*s.out), randF32(r, s.cap*s.out)
			n := countBuf(t, b, s.live, s.cap)
			launches := b.stats.Launches

			// Linear: y = x·w into a view with 3 rows of data after it.
			y0 := randF32(r, (s.cap+3)*s.out)
			yp := upload(t, b, y0)
			b.Linear(upload(t, b, x), n, upload(t, b, w), s.in, s.out, b.View(yp, 0, s.cap*s.out), acc)
			checkTC(t, name+" Linear", readF32(t, b, yp, len(y0)), y0, s.live, s.out, acc,
				func(i, j int) (float64, float64) {
					return dotRef(s.in, func(k int) (float32, float32) { return x[i*s.in+k], w[k*s.out+j] })
				})

			// LinearBackwardData: dx = dy·wᵀ.
			dx0 := randF32(r, (s.cap+3)*s.in)
			dxp := upload(t, b, dx0)
			b.LinearBackwardData(upload(t, b, dy), n, upload(t, b, w), s.in, s.out, b.View(dxp, 0, s.cap*s.in), acc)
			checkTC(t, name+" LinearBackwardData", readF32(t, b, dxp, len(dx0)), dx0, s.live, s.in, acc,
				func(i, j int) (float64, float64) {
					return dotRef(s.out, func(k int) (float32, float32) { return dy[i*s.out+k], w[j*s.out+k] })
				})

			// LinearBackwardWeight: dw = x[:live]ᵀ·dy[:live].
			dw0 := randF32(r, s.in*s.out)
			dw := upload(t, b, dw0)
			b.LinearBackwardWeight(upload(t, b, x), upload(t, b, dy), n, s.in, s.out, dw, acc)
			checkTC(t, name+" LinearBackwardWeight", readF32(t, b, dw, len(dw0)), dw0, s.in, s.out, acc,
				func(i, j int) (float64, float64) {
					return dotRef(s.live, func(k int) (float32, float32) { return x[k*s.in+i], dy[k*s.out+j] })
				})

			must(t, b)
			if b.stats.Gemms != 0 {
				t.Fatalf("%s: %d cuBLAS calls, want the tensor-core kernels only", name, b.stats.Gemms)
			}
			if b.stats.Launches == launches {
				t.Fatalf("%s: no kernel launched", name)
			}
		}
	}
}

// dotRef returns Σ a_k·b_k in float64 over n terms and Σ|a_k·b_k|.
func dotRef(n int, term func(k int) (float32, float32)) (sum, mag float64) {
	for k := range n {
		a, b := term(k)
		p := float64(a) * float64(b)
		sum += p
		mag += math.Abs(p)
	}
	return sum, mag
}

// checkTC checks rows [0, live) of got ([.., cols]) against ref (plus the
// old value when accumulating) and requires every later element to equal
// old bit for bit.
func checkTC(t *testing.T, name string, got, old []float32, live, cols int, acc bool, ref func(i, j int) (float64, float64)) {
	t.Helper()
	tol := tcTolerance
	for i := 0; i < len(got)/cols; i++ {
		for j := range cols {
			g, o := got[i*cols+j], old[i*cols+j]
			if i >= live {
				if math.Float32bits(g) != math.Float32bits(o) {
					t.Fatalf("%s: [%d, %d] past the live rows = %g, was %g", name, i, j, g, o)
				}
				continue
			}
			want, mag := ref(i, j)
			if acc {
				want += float64(o)
				mag += math.Abs(float64(o))
			}
			if d := math.Abs(float64(g) - want); d > tol*(mag+1e-30) {
				t.Fatalf("%s: [%d, %d] = %g, want %g (error %.2g of the terms' magnitude %g, tolerance %g)",
					name, i, j, g, want, d/mag, mag, tol)
			}
		}
	}
}

// TestTensorGemmCapacityInvariant: the same live rows give bitwise the same
// products whatever the capacity (the row tiles and weight-gradient slices
// do not depend on it), so that eager and replayed runs agree.
func TestTensorGemmCapacityInvariant(t *testing.T) {
	const live, in, out = 2300, 100, 256
	r := rand.New(rand.NewPCG(83, 84))
	b := openTest(t, Options{TF32x3: true})
	x, dy, w := randF32(r, 4000*in), randF32(r, 4000*out), randF32(r, in*out)
	var first [3][]float32
	for k, cp := range []int{live, 2500, 4000} {
		n := countBuf(t, b, live, cp)
		xb, dyb, wb := upload(t, b, x[:cp*in]), upload(t, b, dy[:cp*out]), upload(t, b, w)
		y, dx, dw := alloc(t, b, backend.F32, cp*out), alloc(t, b, backend.F32, cp*in), alloc(t, b, backend.F32, in*out)
		b.Linear(xb, n, wb, in, out, y, false)
		b.LinearBackwardData(dyb, n, wb, in, out, dx, false)
		b.LinearBackwardWeight(xb, dyb, n, in, out, dw, false)
		got := [3][]float32{readF32(t, b, y, live*out), readF32(t, b, dx, live*in), readF32(t, b, dw, in*out)}
		if k == 0 {
			first = got
			continue
		}
		for o, name := range []string{"Linear", "LinearBackwardData", "LinearBackwardWeight"} {
			for i := range got[o] {
				if math.Float32bits(got[o][i]) != math.Float32bits(first[o][i]) {
					t.Fatalf("%s at capacity %d: element %d = %g, at capacity %d %g", name, cp, i, got[o][i], live, first[o][i])
				}
			}
		}
	}
}
