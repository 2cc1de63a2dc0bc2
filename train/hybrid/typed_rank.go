package hybrid

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
)

// SourceDegrees are type ty's vertices' degrees as a source, summed over
// the relations whose source is ty: for each vertex, the destination
// lists that name it. Sampling draws a vertex as a neighbour about as
// often as lists name it (as the link task's ranking by degree assumes), so
// it is the typed hybrid mode's ranking of a type's feature rows. [Count]
// of type ty; 0 for a vertex no relation names.
func SourceDegrees(ds *dataset.Dataset, ty int) ([]int64, error) {
	deg := make([]int64, ds.Types[ty].Count)
	for _, r := range ds.Relations {
		if r.Src != ty {
			continue
		}
		if err := r.Graph.Narrow(); err != nil {
			return nil, fmt.Errorf("hybrid: relation %s: %w", ds.RelationName(r), err)
		}
		for _, v := range r.Graph.Indices {
			deg[v]++
		}
	}
	return deg, nil
}

// DegreeRanking orders type ty's vertices by SourceDegrees, highest first,
// ties by id (deterministic), and gives each one's degree in that order:
// order and scores are both [Count].
func DegreeRanking(ds *dataset.Dataset, ty int) (order []int32, scores []int64, err error) {
	deg, err := SourceDegrees(ds, ty)
	if err != nil {
		return nil, nil, err
	}
	order = make([]int32, len(deg))
	for v := range order {
		order[v] = int32(v)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(deg[b], deg[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	scores = make([]int64, len(order))
	for i, v := range order {
		scores[i] = deg[v]
	}
	return order, scores, nil
}

// SplitCache shares one cache of room bytes among the types' caches by a
// global ranking: every type's rows in one order of score per byte
// (scores[t][i] / rowBytes[t], each type's scores in its own ranking's
// order, highest first; ties to the lower type), taken while they fit,
// at most want rows in all (want < 0: no count). A type's cache is so a
// prefix of its own ranking. A type with no scores (a featureless one)
// takes none. It returns the rows each type caches.
func SplitCache(room, want int64, rowBytes []int64, scores [][]int64) []int64 {
	return splitNext(room, want, rowBytes, scores, make([]int64, len(scores)))
}

// SplitHost shares one host tier of room bytes among the types' host
// tiers by the same global ranking as SplitCache, continued after each
// type's cached rows (cached[t], SplitCache's): a type's host tier is so
// the rows of its ranking after its cache's, and a hot type's takes more.
// It returns the rows each type's host tier holds.
func SplitHost(room int64, rowBytes []int64, scores [][]int64, cached []int64) []int64 {
	return splitNext(room, -1, rowBytes, scores, cached)
}

// splitNext takes rows of the global ranking by score per byte, after the
// first from[t] of each type, while they fit room, at most want in all
// (want < 0: no count), and returns the rows taken per type.
func splitNext(room, want int64, rowBytes []int64, scores [][]int64, from []int64) []int64 {
	next := slices.Clone(from)
	for total := int64(0); want < 0 || total < want; total++ {
		best := -1
		for t, s := range scores {
			if next[t] >= int64(len(s)) || rowBytes[t] > room {
				continue
			}
			// s[i]/rowBytes[t] > b[j]/rowBytes[best], in integers.
			if best < 0 || s[next[t]]*rowBytes[best] > scores[best][next[best]]*rowBytes[t] {
				best = t
			}
		}
		if best < 0 {
			break
		}
		next[best]++
		room -= rowBytes[best]
	}
	for t := range next {
		next[t] -= from[t]
	}
	return next
}
