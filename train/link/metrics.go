package link

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// HitsAt are the cut-offs of Metrics.Hits (ogbl-ddi's 20, ogbl-collab's
// 50, ogbl-ppa's 100).
func HitsAt() []int { return []int{20, 50, 100} }

// maxScores bounds the scores of one call: 2^31 in all keeps the AUC's
// count of ordered pairs (twice nPos·nNeg, at most 2^61) exact in a uint64.
const maxScores = 1 << 31

// sortRun is how many scores are sorted, or merged, between two looks at
// the context: about a millisecond's work.
const sortRun = 1 << 16

// Metrics are a set of held-out edges' scores against its fixed negatives.
// A metric that is not defined for the scores (no positives, or no
// negatives for the AUC) is 0.
type Metrics struct {
	AUC float64 `json:"auc"` // ROC-AUC of positives against all negatives (ties count half)
	AP  float64 `json:"ap"`  // average precision, as scikit-learn's (ties grouped)
	// MRR is ogbl-citation2's: each positive ranked among its own
	// negatives, rank = 1 + (#greater + #not less)/2 of them.
	MRR float64 `json:"mrr"`
	// Hits[i] is ogbl-collab's Hits@HitsAt()[i]: the share of positives
	// scoring above the HitsAt()[i]-th highest negative (1 with fewer
	// negatives).
	Hits []float64 `json:"hits"`
}

// Score is ScoreContext without cancellation, for callers that hold no
// context (evaluation's Trainer.score). Scores that ScoreContext refuses
// (one not finite, or a shape that does not fit k) give metrics that are
// all NaN, never a hang.
func Score(pos, neg []float64, k int) Metrics {
	m, err := ScoreContext(context.Background(), pos, neg, k)
	if err != nil {
		nan := math.NaN()
		m = Metrics{AUC: nan, AP: nan, MRR: nan, Hits: make([]float64, len(HitsAt()))}
		for i := range m.Hits {
			m.Hits[i] = nan
		}
	}
	return m
}

// ScoreContext computes the metrics of positive scores pos against
// negative scores neg, where neg[i·k : (i+1)·k] are positive i's negatives
// (k = 0: none are, and the MRR is 0). Every score must be finite: a NaN
// or an infinity, the mark of a diverged model, is an error that says how
// many scores are not finite. pos and neg are not changed; copies of them
// are sorted once, for ROC-AUC, AP and Hits@K together, in runs between
// which ctx is looked at, so a cancelled ctx ends the call within a run
// with ctx's error.
func ScoreContext(ctx context.Context, pos, neg []float64, k int) (Metrics, error) {
	if err := checkScores(pos, neg, k); err != nil {
		return Metrics{}, err
	}
	own, err := ownRanks(ctx, pos, neg, k)
	if err != nil {
		return Metrics{}, err
	}
	sp, err := sortedCopy(ctx, pos)
	if err != nil {
		return Metrics{}, err
	}
	sn, err := sortedCopy(ctx, neg)
	if err != nil {
		return Metrics{}, err
	}
	return rankStats{own: own, levels: levelsOf(sp, sn), nPos: len(pos), nNeg: len(neg)}.metrics(), nil
}

// checkScores refuses scores that ScoreContext cannot rank: a k that does
// not lay neg out per positive, too many scores, or scores that are not
// finite.
func checkScores(pos, neg []float64, k int) error {
	switch {
	case k < 0:
		return fmt.Errorf("link: scoring with %d negatives per positive, want 0 or more", k)
	case k > 0 && (len(neg)%k != 0 || len(neg)/k != len(pos)):
		return fmt.Errorf("link: %d negative scores are not %d per positive of %d", len(neg), k, len(pos))
	case len(pos)+len(neg) > maxScores:
		return fmt.Errorf("link: %d scores, more than the %d one evaluation may rank", len(pos)+len(neg), maxScores)
	}
	return notFinite(countNotFinite(pos)+countNotFinite(neg), len(pos)+len(neg))
}

// countNotFinite counts the scores that are NaN or infinite.
func countNotFinite[F float32 | float64](s []F) int {
	bad := 0
	for _, v := range s {
		if !finite(float64(v)) {
			bad++
		}
	}
	return bad
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// notFinite is the error of bad scores that are not finite among all.
func notFinite(bad, all int) error {
	if bad > 0 {
		return fmt.Errorf("link: %d of %d scores are not finite (NaN or ±Inf): the model has diverged", bad, all)
	}
	return nil
}

// sortedCopy is x sorted ascending (x holds no NaN), sorted in runs of
// sortRun and merged pairwise, looking at ctx between runs and every
// sortRun merged values.
func sortedCopy(ctx context.Context, x []float64) ([]float64, error) {
	a := slices.Clone(x)
	for lo := 0; lo < len(a); lo += sortRun {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		slices.Sort(a[lo:min(lo+sortRun, len(a))])
	}
	if len(a) <= sortRun {
		return a, nil
	}
	b := make([]float64, len(a))
	for width := sortRun; width < len(a); width *= 2 {
		for lo := 0; lo < len(a); lo += 2 * width {
			mid, hi := min(lo+width, len(a)), min(lo+2*width, len(a))
			if err := merge(ctx, b[lo:hi], a[lo:mid], a[mid:hi]); err != nil {
				return nil, err
			}
		}
		a, b = b, a
	}
	return a, nil
}

// merge writes the ascending x and y into dst (len(x)+len(y)), looking
// at ctx every sortRun values.
func merge(ctx context.Context, dst, x, y []float64) error {
	i, j := 0, 0
	for k := range dst {
		if k%sortRun == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if j == len(y) || (i < len(x) && x[i] <= y[j]) {
			dst[k], i = x[i], i+1
		} else {
			dst[k], j = y[j], j+1
		}
	}
	return nil
}
