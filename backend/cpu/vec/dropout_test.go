package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDropApply requires DropApply (the assembly where it runs) to equal
// the portable loop bit for bit, for every length around the 8-element
// groups, with and without the ReLU's gate, on rows holding zeros of both
// signs, NaN, infinities and subnormals, and thresholds at both ends.
func TestDropApply(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, thr := range []uint32{0, 1, 0x80000000, 0x9999999a, ^uint32(0)} {
		for _, relu := range []bool{false, true} {
			for n := 0; n <= 41; n++ {
				words, y := make([]uint32, n), make([]float32, n)
				for j := range y {
					words[j] = r.Uint32()
					if j%5 == 0 {
						words[j] = thr - uint32(r.IntN(2)) // either side of the threshold
					}
					y[j] = testValue(r)
				}
				want, got := append([]float32(nil), y...), append([]float32(nil), y...)
				wantMask, gotMask := make([]uint8, n), make([]uint8, n)
				for j := range gotMask {
					gotMask[j] = 7 // every byte must be written
				}
				dropGo(words, thr, 2.5, relu, want, wantMask)
				DropApply(words, thr, 2.5, relu, got, gotMask)
				for j := range y {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) || gotMask[j] != wantMask[j] {
						t.Fatalf("thr %#x relu %t n %d: element %d (y %g, word %#x): got %g (%#x) mask %d, want %g (%#x) mask %d",
							thr, relu, n, j, y[j], words[j], got[j], math.Float32bits(got[j]), gotMask[j], want[j], math.Float32bits(want[j]), wantMask[j])
					}
				}
			}
		}
	}
}

// TestDropGo checks the portable loop against the definition.
// specialFloats are the values the kernels' tests mix into their rows:
// zeros of both signs, NaN (quiet and signalling), infinities, subnormals
// and the largest magnitudes.
var specialFloats = []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)),
	float32(math.Inf(-1)), 1e-45, -1e-45, math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00001),
	3.4e38, -3.4e38}

// testValue is a normal draw, or one of specialFloats one time in three.
func testValue(r *rand.Rand) float32 {
	if r.IntN(3) == 0 {
		return specialFloats[r.IntN(len(specialFloats))]
	}
	return float32(r.NormFloat64())
}

func TestDropGo(t *testing.T) {
	words := []uint32{9, 10, 11, 10, 9, 12}
	y := []float32{1, 1, -1, float32(math.NaN()), float32(math.NaN()), 0}
	mask := make([]uint8, len(y))
	dropGo(words, 10, 2, true, y, mask)
	want := []float32{0, 2, -2, float32(math.NaN()), 0, 0}
	for j := range y {
		same := y[j] == want[j] || (math.IsNaN(float64(y[j])) && math.IsNaN(float64(want[j])))
		if !same || math.Signbit(float64(y[j])) != math.Signbit(float64(want[j])) {
			t.Fatalf("element %d: %g, want %g", j, y[j], want[j])
		}
	}
	if wantMask := []uint8{0, 1, 0, 0, 0, 0}; string(mask) != string(wantMask) {
		t.Fatalf("mask %v, want %v", mask, wantMask)
	}
}

func TestPositive(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1e-45, -1e-45, inf, -inf, nan, -nan, 3.4e38, math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff)} {
		want := uint32(0)
		if v > 0 {
			want = ^uint32(0)
		}
		if got := Positive(v); got != want {
			t.Errorf("Positive(%g, bits %08x) = %08x, want %08x", v, math.Float32bits(v), got, want)
		}
	}
}

func BenchmarkDropApply(b *testing.B) {
	const n = 1024
	words, y, mask := make([]uint32, n), make([]float32, n), make([]uint8, n)
	r := rand.New(rand.NewPCG(1, 2))
	for j := range y {
		words[j], y[j] = r.Uint32(), float32(r.NormFloat64())
	}
	for b.Loop() {
		DropApply(words, 0x80000000, 1, true, y, mask)
	}
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
}
