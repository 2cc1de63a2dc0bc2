package planted

import (
	"math"

	"github.com/fanout-gnn/fanout/internal/parallel"
	"github.com/fanout-gnn/fanout/rng"
)

// Philox streams of the generator (rng.Key.Stream); keys carry genEpoch,
// which no training stream uses, and the type's or relation's index as
// their Step.
const (
	genEpoch        = 0x706c74 // "plt"
	streamVertices  = 1        // a vertex's community and degree weight
	streamEdges     = 2        // a relation's edge draws
	streamCentroids = 3        // the signs of a type's centroids
	streamFeatures  = 4        // a vertex's feature noise
	streamSplit     = 5        // the target's split
	streamTrim      = 6        // which surplus edges a relation drops
)

// key is the Philox key of stream for the type or relation of index step.
func key(seed uint64, stream uint32, step int) rng.Key {
	return rng.Key{Seed: seed, Epoch: genEpoch, Stream: stream, Step: uint32(step)}
}

// population is one vertex type's communities and degree weights, set up
// for drawing a vertex of a community in proportion to its weight.
type population struct {
	comm     []int32 // [n] each vertex's community
	members  []int32 // [n] the vertices grouped by community, ascending within one
	off      []int64 // [classes+1] community c's members are members[off[c]:off[c+1]]
	pick     alias   // [n] over members: within each community, by weight
	commPick alias   // [classes] the communities, by their total weight
}

// newPopulation draws the communities and weights of n vertices (type
// index typ) and builds the alias tables. Work is split over threads;
// the result does not depend on it.
func newPopulation(n int64, classes, typ, skew int, seed uint64, threads int) *population {
	p := &population{comm: make([]int32, n), off: make([]int64, classes+1)}
	weight := make([]float64, n)
	k := key(seed, streamVertices, typ)
	limit := max(4, math.Sqrt(float64(n)))
	parallel.Range(n, threads, func(_ int, lo, hi int64) {
		for v := lo; v < hi; v++ {
			w := k.Words(uint32(v), 0)
			p.comm[v] = int32(rng.Uniform(w[0], uint32(classes)))
			weight[v] = min(limit, degreeWeight(w[1], skew))
		}
	})
	for _, c := range p.comm {
		p.off[c+1]++
	}
	for c := range classes {
		p.off[c+1] += p.off[c]
	}
	p.members = make([]int32, n)
	next := append([]int64(nil), p.off[:classes]...)
	for v, c := range p.comm {
		p.members[next[c]] = int32(v)
		next[c]++
	}
	p.pick = newAlias(n)
	commWeight := make([]float64, classes)
	parallel.Blocks(int64(classes), threads, func(c int64) {
		lo, hi := p.off[c], p.off[c+1]
		w := make([]float64, hi-lo)
		for i, v := range p.members[lo:hi] {
			w[i] = weight[v]
			commWeight[c] += weight[v]
		}
		p.pick.fill(lo, w)
	})
	p.commPick = newAlias(int64(classes))
	p.commPick.fill(0, commWeight)
	return p
}

// degreeWeight is (1-u)^(-skew/4) for u = w/2^32 in [0, 1), computed
// with square roots, which IEEE 754 rounds exactly, so that the weights
// are the same bits on every machine (math.Pow need not be).
func degreeWeight(w uint32, skew int) float64 {
	x := 1 - float64(w)/(1<<32) // (0, 1]
	r := math.Sqrt(x)
	q := math.Sqrt(r)
	switch skew {
	case 1:
		return 1 / q
	case 2:
		return 1 / r
	case 3:
		return 1 / float64(r*q)
	}
	return 1
}

// size is the number of vertices of community c.
func (p *population) size(c int32) int64 { return p.off[c+1] - p.off[c] }

// vertex draws a vertex of community c (not empty) by weight, from two
// words.
func (p *population) vertex(c int32, w0, w1 uint32) int32 {
	lo := p.off[c]
	i := lo + int64(rng.Uniform(w0, uint32(p.off[c+1]-lo)))
	return p.members[p.pick.resolve(i, w1)]
}

// community draws a community by weight, from two words.
func (p *population) community(w0, w1 uint32) int32 {
	i := int64(rng.Uniform(w0, uint32(len(p.commPick.keep))))
	return int32(p.commPick.resolve(i, w1))
}

// alias is Walker's alias tables over consecutive segments of slots: slot
// i of a segment is itself when a word is below keep[i], else other[i]
// (both positions in the whole table).
type alias struct {
	keep  []uint32
	other []int64
}

func newAlias(n int64) alias { return alias{keep: make([]uint32, n), other: make([]int64, n)} }

// resolve is slot i's pick for the word w.
func (a alias) resolve(i int64, w uint32) int64 {
	if w < a.keep[i] {
		return i
	}
	return a.other[i]
}

// fill builds the segment starting at slot base for the weights w (Vose's
// method: slots below the mean weight are topped up from one above it).
// A segment whose weights are all 0 picks uniformly.
func (a alias) fill(base int64, w []float64) {
	n := len(w)
	var sum float64
	for _, x := range w {
		sum += x
	}
	scaled := make([]float64, n)
	var small, large []int
	for i, x := range w {
		scaled[i] = 1
		if sum > 0 {
			scaled[i] = float64(x*float64(n)) / sum
		}
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.keep[base+int64(s)] = threshold(scaled[s])
		a.other[base+int64(s)] = base + int64(l)
		scaled[l] = float64(scaled[l]+scaled[s]) - 1
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) { // what rounding left: whole slots
		a.keep[base+int64(i)] = math.MaxUint32
		a.other[base+int64(i)] = base + int64(i)
	}
}

// threshold is the word below which a slot of probability q keeps itself.
func threshold(q float64) uint32 {
	return uint32(min(math.Max(q, 0)*(1<<32), math.MaxUint32))
}
