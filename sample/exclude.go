package sample

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/fanout-gnn/fanout/graph"
)

// Exclusion is the set of row entries a link-prediction step takes out of
// the rows it samples (see LayerExcluding): entry (x, w) is neighbour w in
// row x. It is built once per step (BuildExclusion) from the step's
// positive edges, so that a destination finds its excluded entries with a
// look-up instead of every hop copying its rows.
//
// Layout (the backends' too: backend.Sampling's BuildExclusion writes it into
// one I64 buffer, Keys then Buckets):
//   - Keys [2·capacity]: the distinct excluded entries present in the graph,
//     each as x<<32 | p, where p is w's position in row x (rows are sorted
//     and without repeats, so p is unique), sorted by (Bucket(x), key);
//     -1 after the last one.
//   - Buckets [a power of two, at least 4]: bucket β holds start<<32 |
//     count, the keys [start, start+count) whose vertex falls in β (0 for
//     an empty bucket). Bucket(x) = (uint32(x)·0x9E3779B1) >> (32 - log2
//     len(Buckets)), Fibonacci hashing.
//
// Within a bucket keys are sorted, so one vertex's keys are contiguous and
// in the order of their positions in its row.
type Exclusion struct {
	Keys    []int64
	Buckets []int64
}

// Bucket is the bucket of vertex x.
func (ex Exclusion) Bucket(x int32) int {
	shift := 32 - uint(bits.TrailingZeros(uint(len(ex.Buckets))))
	return int((uint32(x) * 0x9E3779B1) >> shift)
}

// Find returns x's excluded positions: they are int32(ex.Keys[lo+j]) for
// j < e, ascending; e = 0 when x has none.
func (ex Exclusion) Find(x int32) (lo, e int) {
	w := uint64(ex.Buckets[ex.Bucket(x)])
	start, cnt := int(w>>32), int(uint32(w))
	if cnt == 0 {
		return 0, 0
	}
	keys := ex.Keys[start : start+cnt]
	a := search(len(keys), func(i int) bool { return int32(keys[i]>>32) >= x })
	b := a + search(len(keys)-a, func(i int) bool { return int32(keys[a+i]>>32) > x })
	return start + a, b - a
}

// Position is the row position of the p-th entry (from 0) of x's row that
// is not excluded, x's excluded positions being Keys[lo:lo+e] (Find): p
// plus the number of excluded positions q_j with q_j - j <= p (q_j - j
// does not decrease, so a binary search finds it).
func (ex Exclusion) Position(lo, e, p int) int {
	keys := ex.Keys[lo : lo+e]
	return p + search(e, func(j int) bool { return int(int32(keys[j]))-j > p })
}

// search is the first i in [0, n) with f(i), or n (f false, then true).
func search(n int, f func(int) bool) int {
	a, b := 0, n
	for a < b {
		m := int(uint(a+b) >> 1)
		if f(m) {
			b = m
		} else {
			a = m + 1
		}
	}
	return a
}

// BuildExclusion writes the exclusion of a step's b = len(src) positive
// edges (src[i], dst[i]) into ex: entry (src[i], dst[i]) of every
// positive and, with reverse, (dst[i], src[i]) too; entries that are not
// in g (w absent from row x) and repeats are left out. len(ex.Keys) must
// be at least 2·b, and len(ex.Buckets) a power of two of at least 4.
// Preconditions (callers validate): len(dst) == len(src), every id in [0,
// g.NumNodes), g narrow. Nothing is allocated.
func BuildExclusion(g *graph.CSR, src, dst []int32, reverse bool, ex Exclusion) {
	m := 0
	add := func(x, w int32) {
		row := g.Indices[g.Indptr[x]:g.Indptr[x+1]]
		if p, ok := slices.BinarySearch(row, w); ok {
			ex.Keys[m] = int64(x)<<32 | int64(p)
			m++
		}
	}
	for i := range src {
		add(src[i], dst[i])
		if reverse {
			add(dst[i], src[i])
		}
	}
	keys := ex.Keys[:m]
	slices.SortFunc(keys, func(a, b int64) int {
		if ba, bb := ex.Bucket(int32(a>>32)), ex.Bucket(int32(b>>32)); ba != bb {
			return ba - bb
		}
		return cmp.Compare(a, b)
	})
	keys = slices.Compact(keys)
	for i := len(keys); i < len(ex.Keys); i++ {
		ex.Keys[i] = -1
	}
	clear(ex.Buckets)
	for i := 0; i < len(keys); {
		j, bk := i+1, ex.Bucket(int32(keys[i]>>32))
		for j < len(keys) && ex.Bucket(int32(keys[j]>>32)) == bk {
			j++
		}
		ex.Buckets[bk] = int64(i)<<32 | int64(j-i)
		i = j
	}
}
