package link

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
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
	var m Metrics
	var err error
	if m.MRR, err = meanReciprocalRank(ctx, pos, neg, k); err != nil {
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
	m.AUC, m.AP = rankMetrics(sp, sn)
	m.Hits = hits(sp, sn)
	return m, nil
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
	bad := 0
	for _, s := range pos {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			bad++
		}
	}
	for _, s := range neg {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("link: %d of %d scores are not finite (NaN or ±Inf): the model has diverged", bad, len(pos)+len(neg))
	}
	return nil
}

// meanReciprocalRank is the MRR of each positive among its own k
// negatives (0 with no positives or k = 0), looking at ctx every sortRun
// negatives.
func meanReciprocalRank(ctx context.Context, pos, neg []float64, k int) (float64, error) {
	if len(pos) == 0 || k == 0 {
		return 0, nil
	}
	var rr float64
	for i, s := range pos {
		if i%max(1, sortRun/k) == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		greater, notLess := 0, 0
		for _, n := range neg[i*k : (i+1)*k] {
			if n > s {
				greater++
			}
			if n >= s {
				notLess++
			}
		}
		rr += 1 / (1 + float64(greater+notLess)/2)
	}
	return rr / float64(len(pos)), nil
}

// rankMetrics are the ROC-AUC and the average precision of the ascending
// positive scores sp against the ascending negative scores sn, walked
// once from the highest score down, equal scores as one threshold.
func rankMetrics(sp, sn []float64) (auc, ap float64) {
	nPos, nNeg := len(sp), len(sn)
	var twice uint64 // 2·(pairs ordered right) + (pairs tied): exact
	var ap64 float64
	negAbove, tp, seen := 0, 0, 0
	for i, j := nPos, nNeg; i > 0 || j > 0; {
		v := math.Inf(-1)
		if i > 0 {
			v = sp[i-1]
		}
		if j > 0 {
			v = max(v, sn[j-1])
		}
		p, n := 0, 0
		for ; i > 0 && sp[i-1] == v; i-- {
			p++
		}
		for ; j > 0 && sn[j-1] == v; j-- {
			n++
		}
		twice += uint64(p) * uint64(2*(nNeg-negAbove-n)+n)
		negAbove += n
		tp, seen = tp+p, seen+p+n
		// p·tp/seen rounds to at most p, and so every partial sum to
		// at most the positives so far: AP never exceeds 1.
		ap64 += float64(p) * float64(tp) / float64(seen)
	}
	if nPos > 0 {
		ap = ap64 / float64(nPos)
	}
	if nPos > 0 && nNeg > 0 {
		auc = float64(twice) / (2 * float64(nPos) * float64(nNeg))
	}
	return auc, ap
}

// hits is Hits@K for each of HitsAt(): the share of the ascending positives
// sp above the K-th highest of the ascending negatives sn (1 with fewer
// than K negatives, 0 with no positives).
func hits(sp, sn []float64) []float64 {
	out := make([]float64, 0, len(HitsAt()))
	for _, at := range HitsAt() {
		if len(sn) < at {
			out = append(out, 1)
			continue
		}
		kth := sn[len(sn)-at]
		above := len(sp) - sort.Search(len(sp), func(i int) bool { return sp[i] > kth })
		out = append(out, float64(above)/float64(max(len(sp), 1)))
	}
	return out
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
