package backendtest

import "math"

// rankScores are the scores of b live positives (capacity bCap) with k
// negatives each, laid out as backend.Link's pairs, with ties: scores on
// a grid of quarters, some negatives equal to their positive, one NaN and
// one infinity among the negatives.
func (e *env) rankScores(b, bCap, k int) []float32 {
	s := make([]float32, bCap*(1+k))
	for i := range s {
		s[i] = float32(e.rnd.IntN(16)) / 4
	}
	for i := range b {
		s[b+i*k+i%k] = s[i] // a tie with its own positive
	}
	s[b+1] = float32(math.NaN())
	s[b+k+2] = float32(math.Inf(1))
	for i := b * (1 + k); i < len(s); i++ {
		s[i] = 1e30 // past the live pairs: counts nothing
	}
	return s
}

// testPairRanks: each live positive's own negatives above it and tied
// with it, counted; ranks past the live positives untouched.
func testPairRanks(e *env) {
	const b, bCap, k = 37, 40, 45
	s := e.rankScores(b, bCap, k)
	ranks := e.poisonI32(2 * bCap)
	e.link().PairRanks(e.upload(s), e.count(b, bCap), k, ranks)
	want := make([]int32, 2*bCap)
	for i := range want {
		want[i] = -999
	}
	ties := 0
	for i := range b {
		want[2*i], want[2*i+1] = 0, 0
		for _, v := range s[b+i*k : b+(i+1)*k] {
			if v > s[i] {
				want[2*i]++
			}
			if v == s[i] {
				want[2*i+1]++
				ties++
			}
		}
	}
	if ties < b {
		e.t.Fatalf("PairRanks: the case has %d ties, want at least %d", ties, b)
	}
	checkEqual(e.t, "PairRanks", e.readI32(ranks, 2*bCap), want, 0)
}

// testLevelCounts: the live negatives between and at the levels, added
// to counts already there, scores that are not finite apart.
func testLevelCounts(e *env) {
	const b, bCap, k = 29, 32, 50
	s := e.rankScores(b, bCap, k)
	levels := []float32{-1, 0.25, 0.5, 1.75, 2, 3.5}
	m := len(levels)
	base := make([]int32, 2*m+2)
	for i := range base {
		base[i] = int32(e.rnd.IntN(5))
	}
	counts := e.upload(append([]int32(nil), base...))
	e.link().LevelCounts(e.upload(levels), m, e.upload(s), e.count(b, bCap), k, counts)
	want := append([]int32(nil), base...)
	for _, v := range s[b : b*(1+k)] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			want[2*m+1]++
			continue
		}
		below := 0
		for _, l := range levels {
			if l < v {
				below++
			}
		}
		if below < m && levels[below] == v {
			want[2*below+1]++
		} else {
			want[2*below]++
		}
	}
	if want[3] == base[3] || want[2*m] == base[2*m] {
		e.t.Fatal("LevelCounts: the case has no score at a level or above them all")
	}
	checkEqual(e.t, "LevelCounts", e.readI32(counts, 2*m+2), want, 0)
}
