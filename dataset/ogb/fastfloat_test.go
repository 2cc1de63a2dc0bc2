package ogb

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkFast compares fastFloat32 with strconv on s, when the fast path
// accepts s.
func checkFast(t *testing.T, s string) bool {
	t.Helper()
	got, ok := fastFloat32([]byte(s))
	if !ok {
		return false
	}
	want, err := strconv.ParseFloat(s, 32)
	if err != nil {
		t.Fatalf("fastFloat32(%q) = %v, but strconv rejects it: %v", s, got, err)
	}
	if math.Float32bits(got) != math.Float32bits(float32(want)) {
		t.Fatalf("fastFloat32(%q) = %v (%#x), want %v (%#x)", s, got, math.Float32bits(got), float32(want), math.Float32bits(float32(want)))
	}
	return true
}

func TestFastFloat32MatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fast := 0
	total := 0
	try := func(s string) {
		total++
		if checkFast(t, s) {
			fast++
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.000", "1", "-1", "+2.5", ".5", "5.", "1e3", "1E-3", "0.1",
		"3.4028235e38", "1e-40", "16777217", "0.333333333333333333", "1234567890123456789", "12345678901234567890"} {
		try(s)
	}
	for range 200000 {
		f := math.Float32frombits(rng.Uint32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		// Float32 values printed as float64 (how pandas writes them), their
		// shortest float32 form, and the midpoint above them.
		try(strconv.FormatFloat(float64(f), 'g', -1, 64))
		try(strconv.FormatFloat(float64(f), 'f', -1, 32))
		next := math.Nextafter32(f, float32(math.Inf(1)))
		mid := (float64(f) + float64(next)) / 2
		try(strconv.FormatFloat(mid, 'g', -1, 64))
		try(strconv.FormatFloat(mid, 'e', 16, 64))
		try(strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64))
		try(strconv.FormatFloat(rng.NormFloat64()*1e-3, 'f', rng.IntN(12), 64))
	}
	if fast < total/2 {
		t.Errorf("fast path taken for %d of %d numbers", fast, total)
	}
}

func FuzzFastFloat32(f *testing.F) {
	for _, s := range []string{"0.5", "-1e-3", "1.0000000596046448", "123456789012345678", ".e1", "1e", "--1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFast(t, s)
	})
}
