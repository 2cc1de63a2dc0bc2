package graph

import "fmt"

// Validate checks the CSR invariants: len(Indptr) = NumNodes+1, Indptr starts
// at 0, never decreases and ends at the number of indices; exactly the right
// one of Indices / Indices64 is used; every index lies in [0, NumNodes). The
// error names the first offending row or edge.
func (g *CSR) Validate() error {
	if g.NumNodes < 0 {
		return fmt.Errorf("csr: negative vertex count %d", g.NumNodes)
	}
	if int64(len(g.Indptr)) != g.NumNodes+1 {
		return fmt.Errorf("csr: indptr has %d entries, want NumNodes+1 = %d", len(g.Indptr), g.NumNodes+1)
	}
	if g.Indptr[0] != 0 {
		return fmt.Errorf("csr: indptr[0] = %d, want 0", g.Indptr[0])
	}
	for v := range g.NumNodes {
		if g.Indptr[v+1] < g.Indptr[v] {
			return fmt.Errorf("csr: row %d: indptr decreases from %d to %d", v, g.Indptr[v], g.Indptr[v+1])
		}
	}
	wide := g.NumNodes >= MaxInt32Vertices
	switch {
	case wide && g.Indices != nil:
		return fmt.Errorf("csr: %d vertices need int64 indices, but int32 indices are set", g.NumNodes)
	case !wide && g.Indices64 != nil:
		return fmt.Errorf("csr: %d vertices need int32 indices, but int64 indices are set", g.NumNodes)
	}
	n := int64(len(g.Indices))
	if wide {
		n = int64(len(g.Indices64))
	}
	if end := g.Indptr[g.NumNodes]; end != n {
		return fmt.Errorf("csr: indptr ends at %d but there are %d indices", end, n)
	}
	if wide {
		return checkIndices(g, g.Indices64)
	}
	return checkIndices(g, g.Indices)
}

// checkIndices reports the first index outside [0, NumNodes) with its row.
func checkIndices[T int32 | int64](g *CSR, idx []T) error {
	for i, u := range idx {
		if int64(u) < 0 || int64(u) >= g.NumNodes {
			return fmt.Errorf("csr: edge %d (row %d): neighbour %d out of range [0, %d)",
				i, g.rowOf(int64(i)), u, g.NumNodes)
		}
	}
	return nil
}

// rowOf returns the row holding edge e (Indptr must be valid).
func (g *CSR) rowOf(e int64) int64 {
	lo, hi := int64(0), g.NumNodes // invariant: Indptr[lo] <= e < Indptr[hi+1]
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if g.Indptr[mid] <= e {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
