package link

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
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

// scoreWithin runs ScoreContext and fails the test, instead of hanging it,
// when the call takes more than 20 s.
func scoreWithin(t *testing.T, ctx context.Context, pos, neg []float64, k int) (m Metrics, err error) {
	t.Helper()
	inTime(t, func() { m, err = ScoreContext(ctx, pos, neg, k) })
	return m, err
}

// inTime runs f and fails the test if f takes more than 20 s.
func inTime(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("scoring did not return in 20 s")
	}
}

// TestScoreNotFinite: a NaN or an infinity among the scores, on either
// side and tied with others, is an error counting the scores that are not
// finite, in bounded time (the tie loop of an earlier version never
// ended on a NaN, which equals nothing); Score gives NaN metrics.
func TestScoreNotFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name     string
		pos, neg []float64
		bad      int
	}{
		{"NaN positive", []float64{0.5, nan}, []float64{0.5, 0.1}, 1},
		{"NaN negative", []float64{0.5, 0.2}, []float64{nan, 0.1}, 1},
		{"NaN both", []float64{nan, nan}, []float64{nan, 0.5}, 3},
		{"+Inf", []float64{inf, 0.2}, []float64{0.3, 0.1}, 1},
		{"-Inf", []float64{0.4, 0.2}, []float64{0.3, -inf}, 1},
	} {
		_, err := scoreWithin(t, context.Background(), c.pos, c.neg, 1)
		want := fmt.Sprintf("%d of 4 scores are not finite", c.bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, want)
		}
		var m Metrics
		inTime(t, func() { m = Score(c.pos, c.neg, 1) })
		if !math.IsNaN(m.AUC) || !math.IsNaN(m.AP) || !math.IsNaN(m.MRR) || !math.IsNaN(m.Hits[0]) {
			t.Errorf("%s: Score = %+v, want NaN metrics", c.name, m)
		}
	}
}

// TestScoreEmpty: metrics that are not defined are 0 (AUC without
// positives or negatives, AP and MRR without positives, MRR with k = 0);
// Hits@K is 1 with fewer than K negatives.
func TestScoreEmpty(t *testing.T) {
	for _, c := range []struct {
		name     string
		pos, neg []float64
		k        int
		auc, ap  float64
	}{
		{"nothing", nil, nil, 0, 0, 0},
		{"no negatives", []float64{0.3, 0.1}, nil, 0, 0, 1},
		{"no positives", nil, []float64{0.3, 0.1}, 0, 0, 0},
		{"no positives, k 2", nil, []float64{}, 2, 0, 0},
	} {
		m, err := scoreWithin(t, context.Background(), c.pos, c.neg, c.k)
		if err != nil || m.AUC != c.auc || m.AP != c.ap || m.MRR != 0 || len(m.Hits) != len(HitsAt()) || m.Hits[0] != 1 {
			t.Errorf("%s: %+v, %v; want AUC %v, AP %v, MRR 0, Hits@20 1", c.name, m, err, c.auc, c.ap)
		}
	}
}

// TestScoreShape: a k that does not lay the negatives out per positive,
// or a negative k, is refused, naming the counts.
func TestScoreShape(t *testing.T) {
	for _, c := range []struct {
		pos, neg int
		k        int
		want     string
	}{{2, 3, 1, "3 negative scores are not 1 per positive of 2"}, {2, 4, 3, "not 3 per positive"}, {1, 1, -1, "-1 negatives per positive"}} {
		_, err := scoreWithin(t, context.Background(), make([]float64, c.pos), make([]float64, c.neg), c.k)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d positives, %d negatives, k %d: %v, want %q", c.pos, c.neg, c.k, err, c.want)
		}
	}
}

// countdown is a context whose Err is nil for its first n calls and
// context.Canceled after: it shows that a call looks at its context
// again and again, not only at its start.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestScoreCancelled: a context cancelled before the call, or in the
// middle of the sorts (after a few of its looks at the context), ends
// the call with context.Canceled; one that is not cancelled lets it
// finish with the metrics of the scores.
func TestScoreCancelled(t *testing.T) {
	n := 5*sortRun + 3
	pos, neg := make([]float64, n), make([]float64, 2*n)
	for i := range pos {
		pos[i] = float64((i*7919)%n) + 0.5
	}
	for i := range neg {
		neg[i] = float64((i * 104729) % n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scoreWithin(t, ctx, pos, neg, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: %v", err)
	}
	for _, looks := range []int{1, 5, 20} {
		if _, err := scoreWithin(t, &countdown{context.Background(), looks}, pos, neg, 2); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d looks: %v", looks, err)
		}
	}
	m, err := scoreWithin(t, context.Background(), pos, neg, 0)
	// Every positive p+0.5 is above the negatives 0..p and below the
	// others; each value 0..n-1 is a negative twice: AUC is the mean of
	// (p+1)/n over p.
	if err != nil || !near(m.AUC, float64(n+1)/(2*float64(n))) {
		t.Errorf("not cancelled: AUC %v, %v; want %v", m.AUC, err, float64(n+1)/(2*float64(n)))
	}
}

// TestSortedCopy: the runs and merges sort as slices.Sort does, at sizes
// about the run's, and leave their input as it was.
func TestSortedCopy(t *testing.T) {
	for _, n := range []int{0, 1, sortRun - 1, sortRun, sortRun + 1, 3*sortRun + 7} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64((i*2654435761)%1000) - 500
		}
		before := slices.Clone(x)
		got, err := sortedCopy(context.Background(), x)
		want := slices.Clone(x)
		slices.Sort(want)
		if err != nil || !slices.Equal(got, want) || !slices.Equal(x, before) {
			t.Errorf("%d values: sorted %t, input kept %t, %v", n, slices.Equal(got, want), slices.Equal(x, before), err)
		}
	}
}
