package planted

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
	"github.com/fanout-gnn/fanout/rng"
)

// edgeChunk is the number of edges a work unit of draw handles.
const edgeChunk = 1 << 14

// drawer draws the edges of one relation.
type drawer struct {
	src, dst *population
	key      rng.Key
	affinity uint32 // a word below it draws the source from the destination's community
	threads  int
	prog     *parallel.Progress
}

// newDrawer draws relation index rel's edges from src's vertices to dst's.
func newDrawer(src, dst *population, rel int, affinity float64, seed uint64, threads int, prog *parallel.Progress) *drawer {
	return &drawer{src: src, dst: dst, key: key(seed, streamEdges, rel), affinity: threshold(affinity), threads: threads, prog: prog}
}

// edge draws edge i: its destination's community by weight, the
// destination by weight within it, then the source from that community
// (with probability affinity, where the source type has vertices there)
// or from one drawn by weight. Twelve words of edge i's sequence.
func (d *drawer) edge(i uint32) (from, to int32) {
	a, b, c := d.key.Words(i, 0), d.key.Words(i, 1), d.key.Words(i, 2)
	comm := d.dst.community(a[0], a[1])
	to = d.dst.vertex(comm, a[2], a[3])
	if b[0] >= d.affinity || d.src.size(comm) == 0 {
		comm = d.src.community(b[1], b[2])
	}
	return d.src.vertex(comm, c[0], c[1]), to
}

// draw draws edges lo..hi-1 into from and to ([hi-lo] each).
func (d *drawer) draw(lo, hi int64) (from, to []int32) {
	from, to = make([]int32, hi-lo), make([]int32, hi-lo)
	chunks := (hi - lo + edgeChunk - 1) / edgeChunk
	parallel.Blocks(chunks, d.threads, func(k int64) {
		a, b := lo+k*edgeChunk, min(lo+(k+1)*edgeChunk, hi)
		for i := a; i < b; i++ {
			from[i-lo], to[i-lo] = d.edge(uint32(i))
		}
		d.prog.Add(b - a)
	})
	return from, to
}

// maxRounds bounds the top-up rounds of exact: each draws what repeats
// took, and a schema asks for at most half the edges its types allow.
const maxRounds = 64

// exact is relation rel's graph of exactly m distinct edges (no self
// loops where src and dst are one type): rows are the destinations, each
// sorted. It draws m edges, then as many more as repeats took (and a
// quarter more) until there are m distinct ones, and drops the surplus:
// the edges with the highest trim words.
func (d *drawer) exact(m, rows, cols int64, within bool, rel int, seed uint64) (*graph.CSR, error) {
	d.prog.Start("edges", m)
	from, to := d.draw(0, m)
	next := m
	for range maxRounds {
		bo := graph.BuildOptions{DropSelfLoops: within, Dedup: true, Threads: d.threads}
		g, err := graph.FromEdges(max(rows, cols), to, from, bo)
		if err != nil {
			return nil, err
		}
		g.NumNodes, g.Indptr = rows, g.Indptr[:rows+1] // rows past the destinations' are empty
		if got := g.NumEdges(); got >= m {
			return trim(g, m, key(seed, streamTrim, rel), d.threads), nil
		}
		more := (m-g.NumEdges())*5/4 + 64
		if next+more > 1<<32 {
			break
		}
		d.prog.Start("more edges", more)
		f, t := d.draw(next, next+more)
		from, to, next = append(from, f...), append(to, t...), next+more
	}
	return nil, fmt.Errorf("could not draw %d distinct edges in %d rounds", m, maxRounds)
}

// trim keeps the m edges of g whose words (two Philox words keyed by the
// edge's row and column, ties broken by the edge) are smallest: a
// deterministic sample whatever the order of the draws. Rows stay sorted.
func trim(g *graph.CSR, m int64, k rng.Key, threads int) *graph.CSR {
	e := g.NumEdges()
	if e == m {
		return g
	}
	rank := make([]ranked, e)
	parallel.Range(g.NumNodes, threads, func(_ int, lo, hi int64) {
		for v := lo; v < hi; v++ {
			for j := g.Indptr[v]; j < g.Indptr[v+1]; j++ {
				w := k.Words(uint32(v), uint32(g.Indices[j]))
				rank[j] = ranked{uint64(w[0])<<32 | uint64(w[1]), uint64(v)<<32 | uint64(g.Indices[j])}
			}
		}
	})
	cut := cutoff(rank, m)
	keep := func(r ranked) bool { return r.compare(cut) <= 0 }
	out := &graph.CSR{NumNodes: g.NumNodes, Indptr: make([]int64, g.NumNodes+1), Indices: make([]int32, 0, m)}
	for v := range g.NumNodes {
		for j := g.Indptr[v]; j < g.Indptr[v+1]; j++ {
			if keep(rank[j]) {
				out.Indices = append(out.Indices, g.Indices[j])
			}
		}
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out
}

// ranked is an edge (row<<32 | column) with its trim word.
type ranked struct{ word, edge uint64 }

// compare orders by word, then by edge.
func (r ranked) compare(o ranked) int {
	return cmp.Or(cmp.Compare(r.word, o.word), cmp.Compare(r.edge, o.edge))
}

// cutoff is the m-th smallest of rank (1 <= m <= len(rank)): the entries
// are counted by their word's top 16 bits, and only the bucket that holds
// the m-th is sorted.
func cutoff(rank []ranked, m int64) ranked {
	var count [1 << 16]int64
	for _, r := range rank {
		count[r.word>>48]++
	}
	b, below := 0, int64(0)
	for below+count[b] < m {
		below += count[b]
		b++
	}
	var bucket []ranked
	for _, r := range rank {
		if int(r.word>>48) == b {
			bucket = append(bucket, r)
		}
	}
	slices.SortFunc(bucket, ranked.compare)
	return bucket[m-below-1]
}
