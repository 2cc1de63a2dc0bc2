// Package graph holds the compressed sparse row (CSR) topology that every
// other package reads: neighbour lists by destination vertex, with int64 row
// offsets and int32 column indices (int64 from 2^31 vertices on).
package graph

import "fmt"

// MaxInt32Vertices is the vertex count from which indices must be int64.
const MaxInt32Vertices = int64(1) << 31

// CSR is a graph in compressed sparse row form. Row v lists the neighbours of
// v: Indices[Indptr[v]:Indptr[v+1]] (or Indices64 for wide graphs). For an
// undirected graph both directions are stored.
//
// Exactly one of Indices and Indices64 is non-nil: Indices when NumNodes is
// below 2^31, Indices64 otherwise. Slices may be memory-mapped and must be
// treated as read-only.
type CSR struct {
	NumNodes  int64
	Indptr    []int64 // [NumNodes+1], non-decreasing, Indptr[0] = 0
	Indices   []int32 // [NumEdges] neighbour ids, when NumNodes < 2^31
	Indices64 []int64 // [NumEdges] neighbour ids, when NumNodes >= 2^31
}

// NumEdges is the number of stored (directed) edges.
func (g *CSR) NumEdges() int64 {
	if len(g.Indptr) == 0 {
		return 0
	}
	return g.Indptr[len(g.Indptr)-1]
}

// Degree is the number of stored neighbours of v.
func (g *CSR) Degree(v int64) int64 { return g.Indptr[v+1] - g.Indptr[v] }

// Wide reports whether indices are int64.
func (g *CSR) Wide() bool { return g.Indices64 != nil }

// Neighbors32 returns the neighbour list of v for a narrow graph.
func (g *CSR) Neighbors32(v int64) []int32 { return g.Indices[g.Indptr[v]:g.Indptr[v+1]] }

// Narrow returns an error unless the graph uses int32 indices; code paths that
// only support int32 ids call it to fail clearly instead of panicking.
func (g *CSR) Narrow() error {
	if g.Indices == nil && g.NumEdges() > 0 {
		return fmt.Errorf("graph has %d vertices: int64 indices are not supported on this path", g.NumNodes)
	}
	return nil
}
