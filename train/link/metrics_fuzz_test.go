package link

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// fuzzScores decodes a fuzzer's bytes into scores: most bytes are one of
// 20 values a quarter apart (so that ties are common), 240-243 are NaN,
// +Inf, -Inf and -0, and 244-255 take the next 8 bytes as a float64's
// bits.
func fuzzScores(data []byte) []float64 {
	var out []float64
	for i := 0; i < len(data); i++ {
		switch b := data[i]; {
		case b < 240:
			out = append(out, float64(int(b)%20-10)/4)
		case b == 240:
			out = append(out, math.NaN())
		case b == 241:
			out = append(out, math.Inf(1))
		case b == 242:
			out = append(out, math.Inf(-1))
		case b == 243:
			out = append(out, math.Copysign(0, -1))
		case i+8 < len(data):
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(data[i+1:])))
			i += 8
		}
	}
	return out
}

// FuzzScore: any scores, NaN, infinities and ties among them, never hang
// or panic ScoreContext: scores that are not all finite, or negatives not
// k per positive, are an error; otherwise AUC, AP, MRR and Hits@K lie in
// [0, 1], and on small inputs they equal an O(n²) count of the pairs.
// npos splits the scores into positives and negatives; k's low bits are
// the negatives per positive, and its top bit keeps a count that does
// not fit k instead of trimming the negatives to fit.
func FuzzScore(f *testing.F) {
	f.Add([]byte{10, 2, 3, 12, 240, 5}, uint8(2), uint8(2))
	f.Add([]byte{1, 1, 1, 1, 1, 1}, uint8(3), uint8(1))
	f.Add([]byte{241, 0, 242, 7}, uint8(2), uint8(1))
	f.Add([]byte{243, 10, 250, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 4}, uint8(1), uint8(0x82))
	f.Add(make([]byte, 64), uint8(2), uint8(21))
	f.Fuzz(func(t *testing.T, data []byte, npos, k uint8) {
		s := fuzzScores(data)
		n := min(int(npos), len(s))
		pos, neg := s[:n], s[n:]
		kk := int(k & 0x7f % 32)
		if k&0x80 == 0 && kk > 0 && len(neg) >= n*kk {
			neg = neg[:n*kk]
		}
		m, err := ScoreContext(context.Background(), pos, neg, kk)
		fits := kk == 0 || len(neg) == n*kk
		if tolerance.Finite(s[:n+len(neg)]) != nil || !fits {
			if err == nil {
				t.Fatalf("scores %v / %v (k %d) accepted: %+v", pos, neg, kk, m)
			}
			return
		}
		if err != nil {
			t.Fatalf("finite scores %v / %v (k %d): %v", pos, neg, kk, err)
		}
		for _, v := range append([]float64{m.AUC, m.AP, m.MRR}, m.Hits...) {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("metrics %+v of %v / %v: not in [0, 1]", m, pos, neg)
			}
		}
		if len(pos)+len(neg) <= 300 {
			want := referenceMetrics(pos, neg, kk)
			for i, c := range [][2]float64{{m.AUC, want.AUC}, {m.AP, want.AP}, {m.MRR, want.MRR}} {
				if err := tolerance.Within(c[0], c[1], 1, 1e-12); err != nil {
					t.Fatalf("metric %d of %v / %v (k %d): %v", i, pos, neg, kk, err)
				}
			}
			if !slices.Equal(m.Hits, want.Hits) {
				t.Fatalf("Hits %v, the pairs' %v", m.Hits, want.Hits)
			}
		}
	})
}

// referenceMetrics counts every pair and threshold, O(n²), for small
// inputs of finite scores.
func referenceMetrics(pos, neg []float64, k int) Metrics {
	var m Metrics
	if len(pos) > 0 && len(neg) > 0 {
		var won float64
		for _, p := range pos {
			for _, n := range neg {
				switch {
				case p > n:
					won++
				case p == n:
					won += 0.5
				}
			}
		}
		m.AUC = won / float64(len(pos)*len(neg))
	}
	// AP: at each distinct score t, highest first, the recall gained by
	// the positives scoring t times the precision of all scores >= t.
	all := append(slices.Clone(pos), neg...)
	done := map[float64]bool{}
	for _, t := range all {
		if done[t] || len(pos) == 0 {
			continue
		}
		done[t] = true
		var at, tp, seen float64
		for _, p := range pos {
			if p == t {
				at++
			}
			if p >= t {
				tp++
			}
		}
		for _, s := range all {
			if s >= t {
				seen++
			}
		}
		m.AP += at / float64(len(pos)) * tp / seen
	}
	if k > 0 && len(pos) > 0 {
		for i, p := range pos {
			rank := 1.0
			for _, n := range neg[i*k : (i+1)*k] {
				switch {
				case n > p:
					rank++
				case n == p:
					rank += 0.5
				}
			}
			m.MRR += 1 / rank
		}
		m.MRR /= float64(len(pos))
	}
	desc := slices.Clone(neg)
	slices.SortFunc(desc, func(a, b float64) int { return -cmpFloat(a, b) })
	for _, at := range HitsAt() {
		if len(neg) < at {
			m.Hits = append(m.Hits, 1)
			continue
		}
		h := 0
		for _, p := range pos {
			if p > desc[at-1] {
				h++
			}
		}
		m.Hits = append(m.Hits, float64(h)/float64(max(len(pos), 1)))
	}
	return m
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
