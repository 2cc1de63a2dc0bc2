// Package planted generates graphs with planted communities whose labels a
// model learns from the neighbourhood: the typed benchmark presets
// (hetero-tiny, mag-sim) and the community labels of the one-type presets
// (fanout gen tiny --labels community).
//
// Every vertex of every type belongs to one of Classes communities (drawn
// uniformly) and has a degree weight θ (heavy-tailed: (1-u)^(-Skew/4),
// capped at the square root of its type's count). An edge of a relation (Src,
// Dst) picks its destination's community in proportion to the
// communities' weights and the destination in proportion to θ within it;
// with probability Affinity its source comes from the same community, and
// otherwise from one drawn in proportion to the source type's community
// weights, again in proportion to θ (a degree-corrected planted
// partition). So a paper's authors, fields and cited papers mostly share
// its community. The target's label is its community; its features are
// its community's centroid (Signal apart from the others', in units of the
// per-entry noise) plus unit noise: a weaker signal than the
// neighbourhood's, so that a model that reads neighbours learns far above
// one that reads features alone.
//
// Generation is deterministic for a seed and does not depend on the
// number of threads: every draw is a Philox word keyed by the seed, a
// stream and the index of what it draws.
package planted

import (
	"errors"
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/dataset"
)

// Type is one vertex type of a schema.
type Type struct {
	Name    string
	Count   int64
	FeatDim int // 0: no features
	// Signal is the distance between two communities' centroids in the
	// type's features, in units of the per-entry noise.
	Signal float64
}

// Relation is one relation of a schema: Edges distinct edges (no self
// loops within a type) from vertices of Types[Src] to vertices of
// Types[Dst].
type Relation struct {
	Name     string
	Src, Dst int
	Edges    int64
}

// Schema is a typed graph to generate.
type Schema struct {
	Types     []Type
	Relations []Relation
	Target    int // the labelled type
	Classes   int // communities, and the target's classes
	// Affinity is the probability that an edge's source is drawn from its
	// destination's community (otherwise from any, by weight).
	Affinity float64
	// Skew sets the degree weights, (1-u)^(-Skew/4) for u uniform in
	// [0, 1) (0 to 3): 0 makes every weight 1 (Poisson degrees); 3, a
	// power law of exponent 7/3, gives degrees as skewed as citation
	// graphs'.
	Skew int
	// Split sizes of the target's vertices, drawn at random.
	Train, Valid, Test int64
}

// check reports the first field of s that cannot be generated.
func (s Schema) check() error {
	if len(s.Types) == 0 || len(s.Relations) == 0 {
		return errors.New("a schema needs types and relations")
	}
	if s.Target < 0 || s.Target >= len(s.Types) {
		return fmt.Errorf("target %d of %d types", s.Target, len(s.Types))
	}
	if err := s.checkShape(); err != nil {
		return err
	}
	for _, t := range s.Types {
		if err := dataset.CheckName("type", t.Name); err != nil {
			return err
		}
		if t.Count < 1 || t.Count > dataset.MaxTypeVertices || t.FeatDim < 0 || t.FeatDim > dataset.MaxFeatDim || !(t.Signal >= 0) || math.IsInf(t.Signal, 0) {
			return fmt.Errorf("type %s: count %d, feat_dim %d, signal %g", t.Name, t.Count, t.FeatDim, t.Signal)
		}
	}
	for _, r := range s.Relations {
		if err := dataset.CheckName("relation", r.Name); err != nil {
			return err
		}
		if r.Src < 0 || r.Src >= len(s.Types) || r.Dst < 0 || r.Dst >= len(s.Types) || r.Edges < 0 {
			return fmt.Errorf("relation %s: types %d and %d, %d edges", r.Name, r.Src, r.Dst, r.Edges)
		}
		if max := maxEdges(s.Types[r.Src].Count, s.Types[r.Dst].Count, r.Src == r.Dst); r.Edges > max/2 {
			return fmt.Errorf("relation %s: %d edges, more than half the %d its types allow", r.Name, r.Edges, max)
		}
	}
	n := s.Types[s.Target].Count
	if s.Train < 1 || s.Valid < 0 || s.Test < 0 || s.Train+s.Valid+s.Test > n {
		return fmt.Errorf("split %d/%d/%d of the target's %d vertices", s.Train, s.Valid, s.Test, n)
	}
	return nil
}

// checkShape checks the classes, the affinity and the skew.
func (s Schema) checkShape() error {
	if s.Classes < 2 || s.Classes > dataset.MaxClasses {
		return fmt.Errorf("%d classes, want 2 to %d", s.Classes, dataset.MaxClasses)
	}
	if !(s.Affinity >= 0 && s.Affinity <= 1) || s.Skew < 0 || s.Skew > 3 {
		return fmt.Errorf("affinity %g (want [0, 1]) or skew %d (want 0 to 3)", s.Affinity, s.Skew)
	}
	return nil
}

// maxEdges is the number of distinct edges between counts of vertices, or
// within one type (no self loops).
func maxEdges(src, dst int64, within bool) int64 {
	if within {
		dst--
	}
	if dst > 0 && src > math.MaxInt64/dst {
		return math.MaxInt64
	}
	return src * dst
}

// NumVertices is the vertices of every type.
func (s Schema) NumVertices() int64 {
	var n int64
	for _, t := range s.Types {
		n += t.Count
	}
	return n
}

// NumEdges is the edges of every relation, reverses not counted.
func (s Schema) NumEdges() int64 {
	var m int64
	for _, r := range s.Relations {
		m += r.Edges
	}
	return m
}
