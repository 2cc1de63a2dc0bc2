package link

import (
	"cmp"
	"math"
	"slices"
)

// HitsAt are the cut-offs of Metrics.Hits (ogbl-ddi's 20, ogbl-collab's
// 50, ogbl-ppa's 100).
var HitsAt = []int{20, 50, 100}

// Metrics are a set of held-out edges' scores against its fixed negatives.
type Metrics struct {
	AUC float64 `json:"auc"` // ROC-AUC of positives against all negatives (ties count half)
	AP  float64 `json:"ap"`  // average precision, as scikit-learn's (ties grouped)
	// MRR is ogbl-citation2's: each positive ranked among its own
	// negatives, rank = 1 + (#greater + #not less)/2 of them.
	MRR float64 `json:"mrr"`
	// Hits[i] is ogbl-collab's Hits@HitsAt[i]: the share of positives
	// scoring above the HitsAt[i]-th highest negative (1 with fewer
	// negatives).
	Hits []float64 `json:"hits"`
}

// Score computes the metrics of positive scores pos against negative
// scores neg, where neg[i·k : (i+1)·k] are positive i's negatives. The
// scores are sorted once, for ROC-AUC, AP and Hits@K together.
func Score(pos, neg []float64, k int) Metrics {
	all := labelled(pos, neg)
	m := Metrics{AUC: auc(all, len(pos), len(neg)), AP: averagePrecision(all, len(pos))}
	if len(pos) > 0 && k > 0 {
		var rr float64
		for i, s := range pos {
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
		m.MRR = rr / float64(len(pos))
	}
	for _, at := range HitsAt {
		if len(neg) < at {
			m.Hits = append(m.Hits, 1)
			continue
		}
		kth, hits := nthNegative(all, at), 0
		for _, s := range pos {
			if s > kth {
				hits++
			}
		}
		m.Hits = append(m.Hits, float64(hits)/float64(max(len(pos), 1)))
	}
	return m
}

// scored is one score with its label.
type scored struct {
	s   float64
	pos bool
}

// labelled lists every score with its label, highest first (equal scores
// in any order: every metric groups them).
func labelled(pos, neg []float64) []scored {
	all := make([]scored, 0, len(pos)+len(neg))
	for _, s := range pos {
		all = append(all, scored{s, true})
	}
	for _, s := range neg {
		all = append(all, scored{s, false})
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	return all
}

// nthNegative is the n-th highest negative score of all (n >= 1, at most
// the negatives' count).
func nthNegative(all []scored, n int) float64 {
	for _, x := range all {
		if !x.pos {
			if n--; n == 0 {
				return x.s
			}
		}
	}
	return math.Inf(-1)
}

// auc is the probability that a positive outscores a negative, ties
// counting half (the Mann-Whitney statistic), over all of nPos positives
// and nNeg negatives.
func auc(all []scored, nPos, nNeg int) float64 {
	if nPos == 0 || nNeg == 0 {
		return 0
	}
	var sum float64
	negsBelow := float64(nNeg)
	for i := 0; i < len(all); {
		j, p, n := i, 0, 0
		for ; j < len(all) && all[j].s == all[i].s; j++ {
			if all[j].pos {
				p++
			} else {
				n++
			}
		}
		negsBelow -= float64(n)
		sum += float64(p) * (negsBelow + float64(n)/2)
		i = j
	}
	return sum / (float64(nPos) * float64(nNeg))
}

// averagePrecision is Σ (R_t - R_{t-1})·P_t over the distinct thresholds
// t of all, highest first, with nPos positives.
func averagePrecision(all []scored, nPos int) float64 {
	if nPos == 0 {
		return 0
	}
	var ap float64
	tp, seen := 0, 0
	for i := 0; i < len(all); {
		j, p := i, 0
		for ; j < len(all) && all[j].s == all[i].s; j++ {
			if all[j].pos {
				p++
			}
		}
		tp += p
		seen += j - i
		ap += float64(p) / float64(nPos) * float64(tp) / float64(seen)
		i = j
	}
	return ap
}
