package rng

import (
	"math"
	"testing"
)

func TestUnitFloat(t *testing.T) {
	if got := UnitFloat(0); got != 0 {
		t.Errorf("UnitFloat(0) = %v", got)
	}
	if got, want := UnitFloat(0xffffffff), float32(1-1.0/(1<<24)); got != want || got >= 1 {
		t.Errorf("UnitFloat(max) = %v, want %v (< 1)", got, want)
	}
	if got := UnitFloat(0x80000000); got != 0.5 {
		t.Errorf("UnitFloat(2^31) = %v, want 0.5", got)
	}
	if got := UniformFloat(0x80000000, -2, 2); got != 0 {
		t.Errorf("UniformFloat(mid, -2, 2) = %v, want 0", got)
	}
}

func TestFillUniformMatchesWord(t *testing.T) {
	k := Key{Seed: 7, Stream: 200}
	const rows, cols = 5, 7
	m := make([]float32, rows*cols)
	k.FillUniform(m, cols, -0.5, 0.5)
	var sum float64
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			want := UniformFloat(k.Word(uint32(r), uint32(c)), -0.5, 0.5)
			if got := m[r*cols+c]; got != want {
				t.Fatalf("[%d,%d] = %v, want %v", r, c, got, want)
			}
			if got := m[r*cols+c]; got < -0.5 || got >= 0.5 {
				t.Fatalf("[%d,%d] = %v out of [-0.5, 0.5)", r, c, got)
			}
			sum += float64(m[r*cols+c])
		}
	}
	if k.Float32(3, 4) != UnitFloat(k.Word(3, 4)) {
		t.Fatal("Float32 disagrees with UnitFloat(Word)")
	}
}

func TestNormal(t *testing.T) {
	k := Key{Seed: 9, Stream: 201}
	const rows, cols = 200, 101
	m := make([]float32, rows*cols)
	k.FillNormal(m, cols, 1, 2)
	var s, s2 float64
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			got := m[r*cols+c]
			want := float32(1 + float32(2*k.Normal(uint32(r), uint32(c))))
			if got != want {
				t.Fatalf("[%d,%d] = %v, want %v", r, c, got, want)
			}
			z := float64(k.Normal(uint32(r), uint32(c)))
			s += z
			s2 += z * z
		}
	}
	n := float64(rows * cols)
	mean, variance := s/n, s2/n-(s/n)*(s/n)
	if math.Abs(mean) > 0.03 || math.Abs(variance-1) > 0.04 {
		t.Errorf("standard normal sample: mean %.4f variance %.4f", mean, variance)
	}
	// Extremes: u1 = 2^-24 gives the largest magnitude, about 5.77.
	if z := boxMuller(0, 0, false); math.Abs(float64(z)-math.Sqrt(2*24*math.Ln2)) > 1e-5 {
		t.Errorf("boxMuller(0, 0) = %v", z)
	}
	if z := boxMuller(0xffffffff, 0, false); z != 0 {
		t.Errorf("boxMuller(max, 0) = %v, want 0", z)
	}
}

func BenchmarkPhilox(b *testing.B) {
	k := Key{Seed: 1}
	var acc uint32
	for i := 0; i < b.N; i++ {
		acc ^= k.Words(uint32(i), 0)[0]
	}
	if acc == 1 {
		b.Log(acc)
	}
}
