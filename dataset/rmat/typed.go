package rmat

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/planted"
)

// Type indices of the typed presets' schemas, ogbn-mag's types (the
// target, paper, first).
const (
	paper = iota
	author
	institution
	fieldOfStudy
)

// magTypes are ogbn-mag's vertex types with counts: paper, the target,
// with paperDim features of the given signal (centroids' distance in noise
// units); the others without features, but field_of_study where fieldDim
// is set.
func magTypes(papers, authors, institutions, fields int64, paperDim, fieldDim int, signal float64) []planted.Type {
	return []planted.Type{
		{Name: "paper", Count: papers, FeatDim: paperDim, Signal: signal},
		{Name: "author", Count: authors},
		{Name: "institution", Count: institutions},
		{Name: "field_of_study", Count: fields, FeatDim: fieldDim, Signal: signal},
	}
}

// magRelations are ogbn-mag's relations with edge counts.
func magRelations(writes, cites, affiliated, topics int64) []planted.Relation {
	return []planted.Relation{
		{Name: "writes", Src: author, Dst: paper, Edges: writes},
		{Name: "cites", Src: paper, Dst: paper, Edges: cites},
		{Name: "affiliated_with", Src: author, Dst: institution, Edges: affiliated},
		{Name: "has_topic", Src: paper, Dst: fieldOfStudy, Edges: topics},
	}
}

// Planted-community parameters of the typed presets: the share of edges
// within a community, the degree skew.
const (
	affinity = 0.8
	skew     = 3
)

// typedPresets are the presets of typed graphs, after the one-type ones;
// each Schema holds its Source's full counts (LookupVariant scales them).
var typedPresets = []Preset{
	{
		Name: "hetero-tiny",
		Schema: &planted.Schema{
			Types:     magTypes(3_000, 4_000, 100, 200, 32, 16, 1.5),
			Relations: magRelations(9_000, 15_000, 4_000, 9_000),
			Target:    paper, Classes: 8, Affinity: affinity, Skew: skew,
			Train: 1_000, Valid: 500, Test: 1_000,
		},
		Model: "rsage", Layers: 2, Hidden: 64, Fanouts: []int{10, 5}, Batch: 256, Dropout: 0.5, LR: 0.01,
	},
	{
		// ogbn-mag's shape: its counts, 349 classes and its time split's sizes.
		Name: "mag-sim", Source: "ogbn-mag",
		Schema: &planted.Schema{
			Types:     magTypes(736_389, 1_134_649, 8_740, 59_965, 128, 0, 3),
			Relations: magRelations(7_145_660, 5_416_271, 1_043_998, 7_505_078),
			Target:    paper, Classes: 349, Affinity: affinity, Skew: skew,
			Train: 629_571, Valid: 64_879, Test: 41_939,
		},
		Model: "rsage", Layers: 3, Hidden: 256, Fanouts: []int{15, 10, 5}, Batch: 1024, Dropout: 0.5, LR: 0.003,
	},
	igbhSim(),
}

// typed fills in a typed preset's FeatDim and Classes from its schema.
func (p Preset) typed() Preset {
	s := *p.Schema
	s.Types = slices.Clone(s.Types)
	s.Relations = slices.Clone(s.Relations)
	p.Schema = &s
	p.FeatDim, p.Classes = s.Types[s.Target].FeatDim, s.Classes
	return p
}

// generateTyped generates a typed preset, its target's width p.FeatDim.
func generateTyped(p Preset, opt Options) (*dataset.Dataset, error) {
	if opt.Labels != "" && opt.Labels != LabelsCommunity {
		return nil, fmt.Errorf("preset %s: --labels %s: a typed preset's labels are its planted communities", p.Name, opt.Labels)
	}
	s := *p.Schema
	s.Types = slices.Clone(s.Types)
	s.Types[s.Target].FeatDim = p.FeatDim
	d, err := planted.Generate(p.Name, s, planted.Options{Seed: opt.Seed, Threads: opt.Threads, NoReverse: opt.NoReverse, Progress: opt.Progress})
	if err == nil && cmp.Or(p.Factor, 1) != 1 {
		d.Source += ", " + p.Share()
	}
	return d, err
}
