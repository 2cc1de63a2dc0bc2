package dataset

import (
	"fmt"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
)

// Preprocessing steps of typed datasets (besides StepDedupEdges).
const (
	// StepDropSelfLoopsWithin: edges v->v of a relation within one type
	// removed.
	StepDropSelfLoopsWithin = "drop-self-loops-within-types"
	// StepReverseRelations: each relation's reverse added, one within a
	// type made undirected instead (AddReverse).
	StepReverseRelations = "reverse-relations"
)

// TypedSteps names the preprocessing BuildRelations applies; reverse says
// whether it added the reverses.
func TypedSteps(reverse bool) []string {
	s := []string{StepDropSelfLoopsWithin, StepDedupEdges}
	if reverse {
		s = append(s, StepReverseRelations)
	}
	return s
}

// EdgeList is one relation's edges before its graph is built: edge i runs
// from vertex From[i] of type Src to vertex To[i] of type Dst (type-local
// ids, in range).
type EdgeList struct {
	Name     string
	Src, Dst int // indices into the types
	From, To []int32
}

// RelationOptions controls BuildRelations.
type RelationOptions struct {
	// Reverse adds the relations' reverses (AddReverse).
	Reverse bool
	// Threads is the number of goroutines; <= 0 means GOMAXPROCS. The
	// result does not depend on it.
	Threads int
	// Progress, when non-nil, hears the graph builder's stages.
	Progress func(stage string, done, total int64)
}

// BuildRelations builds each edge list's relation: its graph's rows are
// the destination type's vertices, each listing the sources of its edges
// sorted and once (repeats dropped), without self loops where the
// relation lies within one type; then, with o.Reverse, the reverses
// (AddReverse). types gives the counts; the lists are read, not kept.
func BuildRelations(types []VertexType, lists []EdgeList, o RelationOptions) ([]Relation, error) {
	rels := make([]Relation, 0, len(lists))
	for _, e := range lists {
		if e.Src < 0 || e.Src >= len(types) || e.Dst < 0 || e.Dst >= len(types) {
			return nil, fmt.Errorf("relation %s: types %d and %d of %d", e.Name, e.Src, e.Dst, len(types))
		}
		rows, cols := types[e.Dst].Count, types[e.Src].Count
		bo := graph.BuildOptions{DropSelfLoops: e.Src == e.Dst, Dedup: true, Threads: o.Threads, Progress: o.Progress}
		g, err := graph.FromEdges(max(rows, cols), e.To, e.From, bo)
		if err != nil {
			return nil, fmt.Errorf("relation (%s, %s, %s): %w", types[e.Src].Name, e.Name, types[e.Dst].Name, err)
		}
		// Rows past the destination's count are empty: every row is a To.
		g.NumNodes, g.Indptr = rows, g.Indptr[:rows+1]
		rels = append(rels, Relation{Name: e.Name, Src: e.Src, Dst: e.Dst, Graph: g})
	}
	if !o.Reverse {
		return rels, nil
	}
	return AddReverse(types, rels, o.Threads)
}

// Featureless types' counts: at most featurelessPerEnd vertices per edge
// end that names the type, and featurelessFree besides.
const (
	featurelessPerEnd = 16
	featurelessFree   = 1 << 20
)

// CheckFeatureless checks the counts of the types without features
// against the edges of lists, for importers whose counts come from a
// metadata file: such a type's vertices exist through its edges (nothing
// else describes them), so a count far above its edge ends (more than 16
// per end, plus 2^20) is refused before a graph of that many rows is
// built. A type with features is checked by its table's rows instead.
func CheckFeatureless(types []VertexType, lists []EdgeList) error {
	ends := make([]int64, len(types))
	for _, l := range lists {
		ends[l.Src] += int64(len(l.From))
		ends[l.Dst] += int64(len(l.To))
	}
	for i, t := range types {
		if t.FeatDim == 0 && t.Count > featurelessFree+featurelessPerEnd*ends[i] {
			return fmt.Errorf("type %s has no features and %d vertices, but its relations name it %d times: a type without features has at most %d vertices per edge end, plus %d",
				t.Name, t.Count, ends[i], featurelessPerEnd, featurelessFree)
		}
	}
	return nil
}

// AddReverse returns rels with the reverses PyTorch Geometric's
// ToUndirected adds: a relation (s, r, d) between two types gets the
// relation (d, "rev_"+r, s), whose graph is its transpose, appended after
// every relation of rels in their order; a relation within one type is
// made undirected instead (its graph united with its transpose, rows
// sorted and without repeats). A reverse whose (d, name, s) rels already
// hold is an error. rels' graphs are read, not modified; a relation made
// undirected gets a new graph.
func AddReverse(types []VertexType, rels []Relation, threads int) ([]Relation, error) {
	threads = parallel.Threads(threads)
	taken := map[[3]string]bool{}
	for _, r := range rels {
		taken[[3]string{types[r.Src].Name, r.Name, types[r.Dst].Name}] = true
	}
	out := make([]Relation, 0, 2*len(rels))
	var rev []Relation
	for _, r := range rels {
		if r.Src == r.Dst {
			r.Graph = undirected(r.Graph, threads)
			out = append(out, r)
			continue
		}
		out = append(out, r)
		name := ReversePrefix + r.Name
		k := [3]string{types[r.Dst].Name, name, types[r.Src].Name}
		if taken[k] {
			return nil, fmt.Errorf("the reverse of (%s, %s, %s) is (%s, %s, %s), which is already a relation (import without reverses, or rename one)",
				types[r.Src].Name, r.Name, types[r.Dst].Name, k[0], k[1], k[2])
		}
		if len(name) > maxTypeName {
			return nil, fmt.Errorf("relation %s: its reverse's name %s is longer than %d bytes", r.Name, name, maxTypeName)
		}
		taken[k] = true
		rev = append(rev, Relation{Name: name, Src: r.Dst, Dst: r.Src, Graph: transpose(r.Graph, types[r.Src].Count, threads)})
	}
	return append(out, rev...), nil
}

// transposeBudget bounds the per-part column counts of transpose, in
// bytes: fewer parts where the columns are many.
const transposeBudget = 1 << 28

// transpose is g's transpose: g's rows are its columns and g's indices
// (ids below cols) its rows, each row sorted. A parallel counting sort:
// each part of g's rows counts its entries per column, and writes them in
// row order after the earlier parts' entries, so every row comes out
// sorted whatever the number of parts.
func transpose(g *graph.CSR, cols int64, threads int) *graph.CSR {
	n := g.NumNodes
	parts := max(1, min(threads, int(transposeBudget/(8*(cols+1)))))
	counts := make([][]int64, parts)
	parallel.Range(n, parts, func(p int, lo, hi int64) {
		c := make([]int64, cols)
		for _, u := range g.Indices[g.Indptr[lo]:g.Indptr[hi]] {
			c[u]++
		}
		counts[p] = c
	})
	indptr := make([]int64, cols+1)
	var off int64
	for u := range cols {
		for _, c := range counts {
			c[u], off = off, off+c[u] // the part's first slot in column u
		}
		indptr[u+1] = off
	}
	indices := make([]int32, off)
	parallel.Range(n, parts, func(p int, lo, hi int64) {
		c := counts[p]
		for v := lo; v < hi; v++ {
			for _, u := range g.Indices[g.Indptr[v]:g.Indptr[v+1]] {
				indices[c[u]] = int32(v)
				c[u]++
			}
		}
	})
	return &graph.CSR{NumNodes: cols, Indptr: indptr, Indices: indices}
}

// undirected is g (a relation within one type: rows and indices are the
// same vertices, rows sorted without repeats) united with its transpose:
// row v lists every u with an edge u->v or v->u, sorted, once.
func undirected(g *graph.CSR, threads int) *graph.CSR {
	t := transpose(g, g.NumNodes, threads)
	n := g.NumNodes
	indptr := make([]int64, n+1)
	parallel.Range(n, threads, func(_ int, lo, hi int64) {
		for v := lo; v < hi; v++ {
			indptr[v+1] = int64(mergeRows(nil, g.Neighbors32(v), t.Neighbors32(v)))
		}
	})
	for v := range n {
		indptr[v+1] += indptr[v]
	}
	indices := make([]int32, indptr[n])
	parallel.Range(n, threads, func(_ int, lo, hi int64) {
		for v := lo; v < hi; v++ {
			mergeRows(indices[indptr[v]:indptr[v+1]], g.Neighbors32(v), t.Neighbors32(v))
		}
	})
	return &graph.CSR{NumNodes: n, Indptr: indptr, Indices: indices}
}

// mergeRows merges two sorted lists without repeats into out (when not
// nil), each value once, and returns how many values the merge has.
func mergeRows(out, a, b []int32) int {
	k, i, j := 0, 0, 0
	for i < len(a) || j < len(b) {
		var x int32
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			x, i = a[i], i+1
		case i == len(a) || b[j] < a[i]:
			x, j = b[j], j+1
		default:
			x, i, j = a[i], i+1, j+1
		}
		if out != nil {
			out[k] = x
		}
		k++
	}
	return k
}
