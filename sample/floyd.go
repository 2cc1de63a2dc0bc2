package sample

import (
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// drawKey holds the parts of a Philox counter and key that are fixed within
// one Layer call: counter = (v, j/4, step, hi), key = pk.
type drawKey struct {
	pk       [2]uint32
	step, hi uint32
}

func newDrawKey(k rng.Key) drawKey {
	return drawKey{pk: k.PhiloxKey(), step: k.Step, hi: k.Epoch<<8 | k.Stream}
}

// words returns the draws 4*q .. 4*q+3 of vertex v.
func (d drawKey) words(v int32, q int) [4]uint32 {
	return rng.Philox([4]uint32{uint32(v), uint32(q), d.step, d.hi}, d.pk)
}

// Look-ahead distances (in destinations) of fillRange's early loads.
const (
	aheadIndptr = 16 // touch the row offset of dst[i+16]
	aheadRow    = 4  // touch the first neighbour of dst[i+4]
)

// fillRange writes the sampled neighbours of destinations [lo, hi) into
// nbrs at their offsets in indptr, writing nothing at or past len(nbrs). It
// returns a value derived from early loads of upcoming rows (Go has no
// prefetch instruction: loading a value the caller keeps lets the cache
// misses of later destinations overlap the current one's work; ~30% faster
// on a graph far larger than the caches). The value means nothing; noinline
// keeps the compiler from discarding those loads.
//
//go:noinline
func fillRange(g *graph.CSR, dst []int32, fanout int, key rng.Key, indptr, nbrs []int32, lo, hi int, ex *Exclusion) (touched int64) {
	dk := newDrawKey(key)
	var set posSet // allocated on first use (fanouts above 32 only)
	ip, ind := g.Indptr, g.Indices
	for i := lo; i < hi; i++ {
		if i+aheadIndptr < hi {
			touched += ip[dst[i+aheadIndptr]]
		}
		if i+aheadRow < hi {
			if p := ip[dst[i+aheadRow]]; p < int64(len(ind)) {
				touched += int64(ind[p])
			}
		}
		off, end := int(indptr[i]), int(indptr[i+1])
		if off >= len(nbrs) {
			return touched // offsets only grow: nothing more fits
		}
		if off == end {
			continue
		}
		v := dst[i]
		row := ind[ip[v]:ip[v+1]]
		out := nbrs[off:min(end, len(nbrs))]
		k := end - off
		if ex != nil {
			if first, e := ex.Find(v); e > 0 {
				fillExcluded(row, k, v, dk, out, &set, ex, first, e)
				continue
			}
		}
		if k >= len(row) {
			copy(out, row)
			continue
		}
		floydPositions(len(row), k, v, dk, out, &set)
		for j, p := range out {
			out[j] = row[p]
		}
	}
	return touched
}

// fillExcluded writes the first len(out) of the k sampled neighbours of v
// whose row has the e excluded positions ex.Keys[first:first+e]: the
// draws run over the d-e entries that are not excluded (all of them, in
// order, when k >= d-e), and position p is the p-th of those.
func fillExcluded(row []int32, k int, v int32, dk drawKey, out []int32, set *posSet, ex *Exclusion, first, e int) {
	if k < len(row)-e {
		floydPositions(len(row)-e, k, v, dk, out, set)
	} else {
		for j := range out {
			out[j] = int32(j)
		}
	}
	for j, p := range out {
		out[j] = row[ex.Position(first, e, int(p))]
	}
}

// floydPositions writes the positions (in [0, d)) that Floyd's algorithm
// chooses for 0 < k < d into out (the first len(out) <= k draws).
func floydPositions(d, k int, v int32, dk drawKey, out []int32, set *posSet) {
	if k <= linearScanMax {
		floydSmall(d, k, v, dk, out)
	} else {
		floydLarge(d, k, v, dk, out, set)
	}
}

// floydSmall runs Floyd's algorithm for 0 < k < d, k <= 32, with a linear
// scan over the chosen positions, writing the first len(out) chosen
// positions (len(out) <= k).
func floydSmall(d, k int, v int32, dk drawKey, out []int32) {
	var chosen [linearScanMax]uint32
	var w [4]uint32
	t := uint32(d - k)
	for j := range out {
		if j&3 == 0 {
			w = dk.words(v, j>>2)
		}
		r := rng.Uniform(w[j&3], t+1)
		for _, c := range chosen[:j] {
			if c == r {
				r = t
				break
			}
		}
		chosen[j] = r
		out[j] = int32(r)
		t++
	}
}

// floydLarge is floydSmall for k > 32, with a hash set of chosen positions.
func floydLarge(d, k int, v int32, dk drawKey, out []int32, set *posSet) {
	set.reset(k)
	var w [4]uint32
	t := uint32(d - k)
	for j := range out {
		if j&3 == 0 {
			w = dk.words(v, j>>2)
		}
		r := rng.Uniform(w[j&3], t+1)
		if !set.insert(r) {
			r = t
			set.insert(r)
		}
		out[j] = int32(r)
		t++
	}
}

// posSet is an open-addressing set of positions (stored as position+1; 0 is
// empty) with at least twice as many slots as elements, so probes stay short.
type posSet struct {
	tab   []uint32
	shift uint32
}

// reset empties the set and makes room for k elements.
func (s *posSet) reset(k int) {
	if len(s.tab) >= 2*k {
		clear(s.tab)
		return
	}
	bits := uint32(1)
	for 1<<bits < 2*k {
		bits++
	}
	s.tab = make([]uint32, 1<<bits)
	s.shift = 32 - bits
}

// insert adds p and reports whether it was absent.
func (s *posSet) insert(p uint32) bool {
	mask := uint32(len(s.tab) - 1)
	i := (p * 0x9E3779B1) >> s.shift
	for {
		switch s.tab[i] {
		case 0:
			s.tab[i] = p + 1
			return true
		case p + 1:
			return false
		}
		i = (i + 1) & mask
	}
}
