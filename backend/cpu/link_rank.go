package cpu

import (
	"math"
	"sort"

	"github.com/fanout-gnn/fanout/backend"
)

// PairRanks counts each live positive's own negatives scoring above it
// and equal to it; see backend.Link.
func (b *Backend) PairRanks(scores backend.Buffer, n backend.Count, k int, ranks backend.Buffer) {
	c, ck := b.checkPairRanks(scores, n, k, ranks)
	defer c.end()
	if !c.ok {
		return
	}
	live, ss, rs := ck.n, ck.scores, ck.ranks
	b.pool.run(live, func(i int) {
		s := ss[i]
		above, tied := int32(0), int32(0)
		for _, v := range ss[live+i*k : live+(i+1)*k] {
			if v > s {
				above++
			}
			if v == s {
				tied++
			}
		}
		rs[2*i], rs[2*i+1] = above, tied
	})
}

// LevelCounts adds up where the live negatives' scores fall among the
// levels; see backend.Link.
func (b *Backend) LevelCounts(levels backend.Buffer, m int, scores backend.Buffer, n backend.Count, k int, counts backend.Buffer) {
	c, ck := b.checkLevelCounts(levels, m, scores, n, k, counts)
	defer c.end()
	if !c.ok {
		return
	}
	live, ls, ss, cs := ck.n, ck.levels[:m], ck.scores, ck.counts
	for _, s := range ss[live : live*(1+k)] {
		if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) {
			cs[2*m+1]++
			continue
		}
		j := sort.Search(m, func(i int) bool { return ls[i] >= s })
		if j < m && ls[j] == s {
			cs[2*j+1]++
		} else {
			cs[2*j]++
		}
	}
}
