package link

import "context"

// rankStats are what a held-out set's metrics need of its scores, which
// the host (ScoreContext) and the device (PairRanks, LevelCounts) both
// count: each positive's rank among its own negatives, and where the
// positives' scores lie among all the negatives'.
type rankStats struct {
	// own[2i] and own[2i+1] are positive i's own negatives scoring above
	// it and equal to it (nil with k = 0).
	own []int32
	// levels are the positives' distinct scores, from the highest down.
	levels     []level
	nPos, nNeg int
}

// level is one distinct positive score: the positives at it, and the
// negatives (of every positive) above it and equal to it.
type level struct {
	pos, above, tied int
}

// metrics are the figures of the counts: ROC-AUC (ties half), average
// precision (ties grouped, as scikit-learn's), ogbl-citation2's MRR and
// ogbl-collab's Hits@K (a positive hits when fewer than K negatives score
// at or above it, so above the K-th highest), as Metrics defines them.
func (r rankStats) metrics() Metrics {
	m := Metrics{MRR: r.reciprocalRank()}
	var twice uint64 // 2·(pairs ordered right) + (pairs tied): exact
	var ap64 float64
	tp := 0
	hit := make([]int, len(HitsAt()))
	for _, l := range r.levels {
		twice += uint64(l.pos) * uint64(2*(r.nNeg-l.above-l.tied)+l.tied)
		tp += l.pos
		// p·tp/seen rounds to at most p, and so every partial sum to at
		// most the positives so far: AP never exceeds 1.
		ap64 += float64(l.pos) * float64(tp) / float64(tp+l.above+l.tied)
		for i, at := range HitsAt() {
			if l.above+l.tied < at {
				hit[i] += l.pos
			}
		}
	}
	if r.nPos > 0 {
		m.AP = ap64 / float64(r.nPos)
	}
	if r.nPos > 0 && r.nNeg > 0 {
		m.AUC = float64(twice) / (2 * float64(r.nPos) * float64(r.nNeg))
	}
	m.Hits = make([]float64, len(HitsAt()))
	for i, at := range HitsAt() {
		m.Hits[i] = 1
		if r.nNeg >= at {
			m.Hits[i] = float64(hit[i]) / float64(max(r.nPos, 1))
		}
	}
	return m
}

// reciprocalRank is the MRR of the positives among their own negatives,
// rank = 1 + (#greater + #not less)/2 (0 with no positives or no own
// negatives).
func (r rankStats) reciprocalRank() float64 {
	if r.nPos == 0 || len(r.own) == 0 {
		return 0
	}
	var rr float64
	for i := range r.nPos {
		greater, tied := r.own[2*i], r.own[2*i+1]
		rr += 1 / (1 + float64(2*greater+tied)/2)
	}
	return rr / float64(r.nPos)
}

// ownRanks counts each positive's own k negatives above it and equal to
// it (rankStats.own; nil with k = 0), looking at ctx every sortRun
// negatives.
func ownRanks(ctx context.Context, pos, neg []float64, k int) ([]int32, error) {
	if k == 0 {
		return nil, nil
	}
	own := make([]int32, 2*len(pos))
	for i, s := range pos {
		if i%max(1, sortRun/k) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for _, n := range neg[i*k : (i+1)*k] {
			if n > s {
				own[2*i]++
			}
			if n == s {
				own[2*i+1]++
			}
		}
	}
	return own, nil
}

// levelsOf are the distinct scores of the ascending positives sp, from
// the highest down, with the ascending negatives sn above and at each.
func levelsOf(sp, sn []float64) []level {
	var out []level
	j := len(sn) // sn[j:] are above the level
	for i := len(sp); i > 0; {
		v, p := sp[i-1], 0
		for ; i > 0 && sp[i-1] == v; i-- {
			p++
		}
		for ; j > 0 && sn[j-1] > v; j-- {
		}
		t := 0
		for ; j-t > 0 && sn[j-t-1] == v; t++ {
		}
		out = append(out, level{pos: p, above: len(sn) - j, tied: t})
	}
	return out
}
