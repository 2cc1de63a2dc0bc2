package link

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestScoreByHand: metrics worked out by hand, ties included.
func TestScoreByHand(t *testing.T) {
	// Positives 0.9 and 0.4, each with one negative: 0.5 and 0.1.
	// AUC: of the four (positive, negative) pairs, 0.4 < 0.5 alone is
	// misordered: 3/4. AP: ranked 0.9+, 0.5-, 0.4+, 0.1-: recall 1/2 at
	// precision 1, then 1 at precision 2/3: 1/2 + 1/3. MRR: each positive
	// beats its own negative: 1. Hits@20: fewer than 20 negatives: 1.
	m := Score([]float64{0.9, 0.4}, []float64{0.5, 0.1}, 1)
	if !near(m.AUC, 0.75) || !near(m.AP, 0.5+1.0/3) || !near(m.MRR, 1) || m.Hits[0] != 1 {
		t.Errorf("Score = %+v, want AUC 0.75, AP 0.8333, MRR 1, Hits@20 1", m)
	}
	// A tie counts half: AUC 1/2; the positive's rank is 1.5 (MRR 2/3);
	// AP: the tied group at the top holds the one positive at precision
	// 1/2.
	m = Score([]float64{0.5}, []float64{0.5}, 1)
	if !near(m.AUC, 0.5) || !near(m.MRR, 2.0/3) || !near(m.AP, 0.5) {
		t.Errorf("tied Score = %+v, want AUC 0.5, MRR 0.6667, AP 0.5", m)
	}
	// Ranking among 3 negatives each: positive 0 beats two of its own and
	// loses to one (rank 2), positive 1 loses to all three (rank 4).
	m = Score([]float64{0.6, 0.0}, []float64{0.7, 0.1, 0.2, 0.3, 0.4, 0.5}, 3)
	if !near(m.MRR, (1.0/2+1.0/4)/2) {
		t.Errorf("MRR %v, want %v", m.MRR, (1.0/2+1.0/4)/2)
	}
}

// TestHitsAgainstKthNegative: Hits@20 counts positives above the 20th
// highest negative.
func TestHitsAgainstKthNegative(t *testing.T) {
	neg := make([]float64, 40)
	for i := range neg {
		neg[i] = float64(i) // the 20th highest is 20
	}
	m := Score([]float64{19.5, 20, 20.5, 39.5}, neg, 10)
	if m.Hits[0] != 0.5 || m.Hits[2] != 1 {
		t.Errorf("Hits %v, want 0.5 at 20 (20.5 and 39.5 beat 20) and 1 at 100 (fewer negatives)", m.Hits)
	}
}
