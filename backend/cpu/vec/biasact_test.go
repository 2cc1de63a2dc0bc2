package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBiasAct requires BiasAct (the assembly where it runs) to equal the
// portable loop bit for bit, and NaN where it gives NaN, for every length
// around the 8-element groups, with and without a bias and the ReLU, in
// place and not, on rows of signed zeros, NaN, infinities and subnormals.
func TestBiasAct(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := 0; n <= 41; n++ {
		for _, withBias := range []bool{false, true} {
			for _, relu := range []bool{false, true} {
				for _, inPlace := range []bool{false, true} {
					x, bias := make([]float32, n), []float32(nil)
					for j := range x {
						x[j] = testValue(r)
					}
					if withBias {
						bias = make([]float32, n)
						for j := range bias {
							bias[j] = testValue(r)
						}
					}
					want := make([]float32, n)
					biasActGo(x, bias, relu, want)
					got := make([]float32, n)
					if inPlace {
						got = append(got[:0], x...)
						BiasAct(got, bias, relu, got)
					} else {
						BiasAct(x, bias, relu, got)
					}
					for j := range want {
						w, g := want[j], got[j]
						if math.IsNaN(float64(w)) != math.IsNaN(float64(g)) || (!math.IsNaN(float64(w)) && math.Float32bits(w) != math.Float32bits(g)) {
							t.Fatalf("n %d bias %t relu %t in place %t: element %d (x %g): got %g (%#x), want %g (%#x)",
								n, withBias, relu, inPlace, j, x[j], g, math.Float32bits(g), w, math.Float32bits(w))
						}
					}
				}
			}
		}
	}
}

func BenchmarkBiasAct(b *testing.B) {
	const n = 1024
	x, bias, y := make([]float32, n), make([]float32, n), make([]float32, n)
	r := rand.New(rand.NewPCG(1, 2))
	for j := range x {
		x[j], bias[j] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	for b.Loop() {
		BiasAct(x, bias, true, y)
	}
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
}
