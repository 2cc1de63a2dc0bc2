package rmat

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
)

// Variant changes a typed preset before it is generated (fanout gen
// --scale, --classes). Zero fields keep the preset's own.
type Variant struct {
	// Scale is the share of the preset's Source to generate, in (0, 1]:
	// every type's count, relation's edges and split size multiplied by
	// it and rounded (a type's count, a relation's edges and the training
	// set at least 1), so each type keeps its share of the vertices and
	// its degree in each relation. 0 takes the preset's Factor.
	Scale float64
	// Classes replaces the number of planted communities, the target's
	// classes (2 to dataset.MaxClasses).
	Classes int
}

// LookupVariant returns a copy of the named preset changed by v, or an
// error naming the preset and what it does not take: an R-MAT preset
// has a fixed size and label scheme, so it takes neither field.
func LookupVariant(name string, v Variant) (Preset, error) {
	p, err := find(name)
	if err != nil {
		return Preset{}, err
	}
	p.Fanouts = slices.Clone(p.Fanouts)
	if p.Schema == nil {
		switch {
		case v.Scale != 0:
			return Preset{}, fmt.Errorf("preset %s: scale %g: an R-MAT preset has a fixed size (2^%d vertices); the typed presets scale", name, v.Scale, p.Scale)
		case v.Classes != 0:
			return Preset{}, fmt.Errorf("preset %s: classes %d: an R-MAT preset's classes are fixed (%d); the typed presets take another count", name, v.Classes, p.Classes)
		}
		return p, nil
	}
	f := cmp.Or(v.Scale, p.Factor, 1)
	if !(f > 0 && f <= 1) {
		return Preset{}, fmt.Errorf("preset %s: scale %g: want a share of its counts in (0, 1]", name, f)
	}
	if v.Classes != 0 && (v.Classes < 2 || v.Classes > dataset.MaxClasses) {
		return Preset{}, fmt.Errorf("preset %s: classes %d: want 2 to %d", name, v.Classes, dataset.MaxClasses)
	}
	p = p.typed()
	p.scale(f)
	if v.Classes != 0 {
		p.Schema.Classes, p.Classes = v.Classes, v.Classes
	}
	return p, nil
}

// scale multiplies the counts of p's schema (a copy: typed) by f and
// records it in p.Factor. A factor of 1 changes nothing.
func (p *Preset) scale(f float64) {
	p.Factor = f
	if f == 1 {
		return
	}
	times := func(n int64, least int64) int64 { return max(least, int64(math.Round(float64(n)*f))) }
	s := p.Schema
	for i := range s.Types {
		s.Types[i].Count = times(s.Types[i].Count, 1)
	}
	for i := range s.Relations {
		s.Relations[i].Edges = times(s.Relations[i].Edges, 1)
	}
	s.Train, s.Valid, s.Test = times(s.Train, 1), times(s.Valid, 0), times(s.Test, 0)
}

// Share says how much of its source a typed preset is ("scale 0.1 of
// IGB-H medium"); empty for an R-MAT preset.
func (p Preset) Share() string {
	if p.Schema == nil {
		return ""
	}
	s := fmt.Sprintf("scale %g", cmp.Or(p.Factor, 1))
	if p.Source != "" {
		s += " of " + p.Source
	}
	return s
}

// EstimatedBytes is about the size of the preset's dataset on disk in
// bytes, its features stored at featBytes bytes an entry (4: float32, 2:
// bfloat16): the feature tables, every relation's CSR (int32 ids, int64
// row offsets) with its reverse (a relation within a type made undirected
// counted twice), the labels and the split; a one-type preset's graph
// counted as every pair stored both ways and every vertex in a split. An
// upper bound but for the manifest's few hundred bytes.
func (p Preset) EstimatedBytes(featBytes int) int64 {
	if p.Schema == nil {
		n := p.NumNodes()
		return n*int64(p.FeatDim*featBytes) + 2*p.Pairs*4 + (n+1)*8 + n*4 + n*8
	}
	s := p.Schema
	var b int64
	for i, t := range s.Types {
		w := int64(t.FeatDim)
		if i == s.Target {
			w = int64(p.FeatDim)
		}
		b += t.Count * w * int64(featBytes)
	}
	for _, r := range s.Relations {
		b += 2 * r.Edges * 4                                       // the relation and its reverse
		b += (s.Types[r.Dst].Count + s.Types[r.Src].Count + 2) * 8 // both row offsets
	}
	return b + s.Types[s.Target].Count*4 + (s.Train+s.Valid+s.Test)*8
}
