package graph

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// BuildOptions controls FromEdges.
type BuildOptions struct {
	// Symmetrize stores every edge (u, v) with u != v in both rows u and v.
	// A self loop (u, u) is stored once.
	Symmetrize bool
	// DropSelfLoops discards every edge (u, u).
	DropSelfLoops bool
	// Dedup keeps one copy of each (row, neighbour) pair.
	Dedup bool
	// Threads is the number of worker goroutines; <= 0 means GOMAXPROCS.
	// The result does not depend on it.
	Threads int
	// Progress, when non-nil, is told how far each stage ("count",
	// "scatter", "sort", "compact") has come, in edges. Calls are serialized
	// but may come from any goroutine.
	Progress func(stage string, done, total int64)
}

// errWide is returned for graphs whose ids do not fit int32.
var errWide = errors.New("int64 ids not supported by FromEdges")

// FromEdges builds a CSR graph with numNodes vertices from the edge list
// (src[i], dst[i]): row src[i] lists dst[i]. Every row's neighbours are
// sorted ascending. src and dst are [numEdges] vertex ids in [0, numNodes);
// they are read, never modified or retained. numNodes must be below 2^31.
//
// It is a parallel counting sort by row followed by a parallel per-row sort
// (and deduplication). Memory beyond the result: one int64 per vertex per
// thread.
func FromEdges(numNodes int64, src, dst []int32, opt BuildOptions) (*CSR, error) {
	if numNodes < 0 {
		return nil, fmt.Errorf("FromEdges: negative vertex count %d", numNodes)
	}
	if numNodes >= MaxInt32Vertices {
		return nil, fmt.Errorf("FromEdges: %d vertices: %w", numNodes, errWide)
	}
	if len(src) != len(dst) {
		return nil, fmt.Errorf("FromEdges: %d sources but %d destinations", len(src), len(dst))
	}
	b := &builder{
		n:       numNodes,
		src:     src,
		dst:     dst,
		opt:     opt,
		threads: parallel.Threads(opt.Threads),
		prog:    parallel.NewProgress(opt.Progress),
	}
	if err := b.count(); err != nil {
		return nil, err
	}
	b.prefix()
	b.scatter()
	b.sortRows()
	if opt.Dedup {
		b.compact()
	}
	return &CSR{NumNodes: numNodes, Indptr: b.indptr, Indices: b.indices}, nil
}

// builder holds the state of one FromEdges call.
type builder struct {
	n        int64
	src, dst []int32
	opt      BuildOptions
	threads  int
	prog     *parallel.Progress

	counts  [][]int64 // [threads][n]: per-part row counts, then write offsets
	indptr  []int64   // [n+1]
	indices []int32   // [indptr[n]]
	newDeg  []int64   // [n] row lengths after dedup (aliases counts[0])
}

// progressChunk is how many edges a worker handles between progress reports.
const progressChunk = 1 << 22

// count fills counts[t][v] with the number of entries part t adds to row v,
// and checks every id; the error names the lowest offending edge index.
func (b *builder) count() error {
	m := int64(len(b.src))
	b.prog.Start("count", m)
	b.counts = make([][]int64, b.threads)
	bad := make([]int64, b.threads)
	for t := range bad {
		bad[t] = -1
	}
	parallel.Range(m, b.threads, func(t int, lo, hi int64) {
		c := make([]int64, b.n)
		b.counts[t] = c
		n := uint32(b.n)
		for clo := lo; clo < hi; clo += progressChunk {
			chi := min(clo+progressChunk, hi)
			for i := clo; i < chi; i++ {
				s, d := b.src[i], b.dst[i]
				if uint32(s) >= n || uint32(d) >= n {
					bad[t] = i
					return
				}
				if s == d {
					if !b.opt.DropSelfLoops {
						c[s]++
					}
					continue
				}
				c[s]++
				if b.opt.Symmetrize {
					c[d]++
				}
			}
			b.prog.Add(chi - clo)
		}
	})
	for _, i := range bad {
		if i >= 0 {
			return fmt.Errorf("FromEdges: edge %d (%d -> %d): vertex id out of range [0, %d)",
				i, b.src[i], b.dst[i], b.n)
		}
	}
	return nil
}

// prefix turns the counts into indptr and each part's per-row write offsets.
func (b *builder) prefix() {
	b.indptr = make([]int64, b.n+1)
	var off int64
	for v := range b.n {
		b.indptr[v] = off
		for _, c := range b.counts {
			k := c[v]
			c[v] = off
			off += k
		}
	}
	b.indptr[b.n] = off
	b.indices = make([]int32, off)
}

// scatter writes every edge into its row at its part's offsets.
func (b *builder) scatter() {
	m := int64(len(b.src))
	b.prog.Start("scatter", m)
	parallel.Range(m, b.threads, func(t int, lo, hi int64) {
		off, idx := b.counts[t], b.indices
		for clo := lo; clo < hi; clo += progressChunk {
			chi := min(clo+progressChunk, hi)
			for i := clo; i < chi; i++ {
				s, d := b.src[i], b.dst[i]
				if s == d {
					if !b.opt.DropSelfLoops {
						idx[off[s]] = d
						off[s]++
					}
					continue
				}
				idx[off[s]] = d
				off[s]++
				if b.opt.Symmetrize {
					idx[off[d]] = s
					off[d]++
				}
			}
			b.prog.Add(chi - clo)
		}
	})
	b.newDeg = b.counts[0]
	b.counts = nil
}

// sortBlockEdges is the target number of edges per block of rows in sortRows.
const sortBlockEdges = 1 << 16

// rowBlocks splits the rows into blocks of about sortBlockEdges edges (a
// block holds at least one row); it returns the block start rows plus n.
func (b *builder) rowBlocks() []int64 {
	e := b.indptr[b.n]
	starts := []int64{0}
	for target := int64(sortBlockEdges); target < e; target += sortBlockEdges {
		// first row whose start is >= target
		r := int64(sort.Search(int(b.n), func(i int) bool { return b.indptr[i] >= target }))
		if r > starts[len(starts)-1] && r < b.n {
			starts = append(starts, r)
		}
	}
	return append(starts, b.n)
}

// sortRows sorts each row ascending and, with Dedup, removes repeats within
// the row, recording the new row lengths in newDeg.
func (b *builder) sortRows() {
	blocks := b.rowBlocks()
	b.prog.Start("sort", b.indptr[b.n])
	parallel.Blocks(int64(len(blocks)-1), b.threads, func(k int64) {
		lo, hi := blocks[k], blocks[k+1]
		for v := lo; v < hi; v++ {
			row := b.indices[b.indptr[v]:b.indptr[v+1]]
			slices.Sort(row)
			if b.opt.Dedup {
				b.newDeg[v] = int64(len(slices.Compact(row)))
			}
		}
		b.prog.Add(b.indptr[hi] - b.indptr[lo])
	})
}

// compact moves the deduplicated rows together and rewrites indptr. It runs
// on one goroutine: rows only move left, so a forward pass is safe.
func (b *builder) compact() {
	b.prog.Start("compact", b.indptr[b.n])
	var w int64
	for v := range b.n {
		lo, k := b.indptr[v], b.newDeg[v]
		if w != lo {
			copy(b.indices[w:w+k], b.indices[lo:lo+k])
		}
		b.indptr[v] = w
		w += k
	}
	b.prog.Add(b.indptr[b.n])
	b.indptr[b.n] = w
	b.indices = b.indices[:w:w]
	b.newDeg = nil
}
