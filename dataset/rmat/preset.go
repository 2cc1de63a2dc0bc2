// Package rmat generates fanout's benchmark datasets (tiny, products-sim,
// papers-sim): an R-MAT graph with randomly permuted vertex ids, symmetrized,
// without self loops or duplicate edges; planted labels that can be read from
// a vertex's neighbourhood but hardly from its own features (see Generate);
// and a seeded split. With Options.Labels = LabelsCommunity a one-type
// preset is a planted partition of its size instead (community.go), and
// the typed presets (hetero-tiny, mag-sim: typed.go; igbh-sim: igbh.go)
// are planted partitions of several types (package planted), which
// LookupVariant scales (scale.go).
//
// Generation is deterministic for a seed and does not depend on the number of
// threads: every random draw is keyed by a fixed chunk or vertex index.
package rmat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/planted"
)

// Preset defines one benchmark dataset and the model trained on it.
type Preset struct {
	Name    string
	Scale   int     // 2^Scale vertices
	Pairs   int64   // R-MAT pairs drawn (before symmetrizing and dedup)
	A, B, C float64 // R-MAT quadrant probabilities; D = 1 - A - B - C
	FeatDim int
	Classes int
	// Signal is the distance between two type centroids in units of the
	// per-entry feature noise, at width SignalDim: large enough that a
	// vertex's type can be read from its own features (labels cannot: see
	// Generate).
	Signal float64
	// SignalDim is the width at which the centroids lie Signal apart: each
	// centroid entry is ±Signal/sqrt(2·SignalDim) at any FeatDim. A preset
	// sets it to its own FeatDim, so a table made wider (fanout train
	// --feat-dim) keeps the signal of each column, as added columns of the
	// same quality would, and its centroids lie Signal·sqrt(FeatDim/SignalDim)
	// apart; 0 means FeatDim. (Spreading a fixed distance over more columns
	// instead left 1280-wide columns a third of their signal each, and the
	// model learned far more slowly than at 128: docs/perf.md, "The
	// wide-feature task".)
	SignalDim int

	// Split sizes among labelled vertices. NumTrain/NumValid > 0 give counts;
	// otherwise TrainFrac/ValidFrac give fractions (rounded down). NumTest > 0
	// caps the test set; 0 puts every remaining labelled vertex in it.
	NumTrain, NumValid, NumTest int64
	TrainFrac, ValidFrac        float64

	// Schema, when set, makes the preset a typed graph of planted
	// communities (package planted): Scale, Pairs, A, B, C, Signal and the
	// split's fields are unused, and FeatDim and Classes are the schema's
	// target width and classes.
	Schema *planted.Schema
	// Source names the graph whose counts a typed preset's Schema holds
	// ("ogbn-mag", "IGB-H medium"); empty for the preset's own.
	Source string
	// Factor is the share of Source's counts a typed preset generates:
	// every type's count, relation's edges and split size multiplied by
	// it (scale.go). In the preset table it is the default (0 means 1);
	// LookupVariant applies it, or Variant.Scale, and records the one
	// applied here.
	Factor float64

	// Default model and sampling.
	Model   string // "sage" (mean aggregator); "rsage" or "rgat" for a typed preset
	Layers  int
	Hidden  int
	Heads   int   // attention heads of the model ("rgat"); 0 for a model without attention
	Fanouts []int // fanouts[h] = neighbours sampled at hop h+1 from the seeds
	Batch   int
	Dropout float32
	LR      float32 // Adam learning rate
}

// MaxTrain bounds the size of the training split before generating:
// NumTrain, or TrainFrac of every vertex (the split takes that fraction of
// the labelled ones).
func (p Preset) MaxTrain() int64 {
	if p.Schema != nil {
		return p.Schema.Train
	}
	if p.NumTrain > 0 {
		return p.NumTrain
	}
	return int64(p.TrainFrac * float64(p.NumNodes()))
}

// signalDim is the width whose centroids lie Signal apart (SignalDim, or
// FeatDim when it is 0).
func (p Preset) signalDim() int {
	if p.SignalDim > 0 {
		return p.SignalDim
	}
	return p.FeatDim
}

// NumNodes is the vertex count, 2^Scale; of a typed preset, of every type.
func (p Preset) NumNodes() int64 {
	if p.Schema != nil {
		return p.Schema.NumVertices()
	}
	return int64(1) << p.Scale
}

// NumPairs is the vertex pairs drawn, Pairs; of a typed preset, the
// relations' edges (reverses not counted).
func (p Preset) NumPairs() int64 {
	if p.Schema != nil {
		return p.Schema.NumEdges()
	}
	return p.Pairs
}

// R-MAT quadrant probabilities of every preset (DESIGN §6).
const (
	rmatA, rmatB, rmatC = 0.57, 0.19, 0.19
)

// presets in the order Names lists them.
var presets = []Preset{
	{
		Name: "tiny", Scale: 14, Pairs: 200_000, A: rmatA, B: rmatB, C: rmatC,
		FeatDim: 32, SignalDim: 32, Classes: 8, Signal: 7, TrainFrac: 0.2, ValidFrac: 0.1,
		Model: "sage", Layers: 2, Hidden: 64, Fanouts: []int{10, 5}, Batch: 256,
		Dropout: 0.5, LR: 0.01,
	},
	{
		Name: "products-sim", Scale: 21, Pairs: 62_000_000, A: rmatA, B: rmatB, C: rmatC,
		FeatDim: 100, SignalDim: 100, Classes: 47, Signal: 7, NumTrain: 196_615, NumValid: 39_323,
		Model: "sage", Layers: 3, Hidden: 256, Fanouts: []int{15, 10, 5}, Batch: 1024,
		Dropout: 0.5, LR: 0.003,
	},
	{
		Name: "papers-sim", Scale: 24, Pairs: 400_000_000, A: rmatA, B: rmatB, C: rmatC,
		FeatDim: 128, SignalDim: 128, Classes: 172, Signal: 8, NumTrain: 1_207_179, NumValid: 125_265, NumTest: 214_338,
		Model: "sage", Layers: 3, Hidden: 256, Fanouts: []int{15, 10, 5}, Batch: 1024,
		Dropout: 0.5, LR: 0.003,
	},
}

// Names lists the preset names, the typed ones last.
func Names() []string {
	var out []string
	for _, p := range append(slices.Clone(presets), typedPresets...) {
		out = append(out, p.Name)
	}
	return out
}

// Lookup returns a copy of the named preset (a typed one at its default
// Factor), or an error listing the valid names.
func Lookup(name string) (Preset, error) { return LookupVariant(name, Variant{}) }

// find returns the named preset as the table holds it (its slices shared).
func find(name string) (Preset, error) {
	for _, p := range append(slices.Clone(presets), typedPresets...) {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("unknown preset %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// check reports the first field of p that cannot be generated.
func (p Preset) check() error {
	if p.Schema != nil {
		if p.FeatDim < 0 {
			return fmt.Errorf("preset %s: feature dimension %d < 0", p.Name, p.FeatDim)
		}
		return nil // planted.Generate checks the schema
	}
	switch {
	case p.Scale < 1 || p.Scale > 30:
		return fmt.Errorf("preset %s: scale %d outside [1, 30]", p.Name, p.Scale)
	case p.Pairs < 0:
		return fmt.Errorf("preset %s: negative pair count %d", p.Name, p.Pairs)
	case p.A < 0 || p.B < 0 || p.C < 0 || p.A+p.B+p.C > 1:
		return fmt.Errorf("preset %s: R-MAT probabilities (%g, %g, %g) invalid", p.Name, p.A, p.B, p.C)
	case p.FeatDim < 1:
		return fmt.Errorf("preset %s: feature dimension %d < 1", p.Name, p.FeatDim)
	case p.Signal < 0:
		return fmt.Errorf("preset %s: negative feature signal %g", p.Name, p.Signal)
	case p.SignalDim < 0:
		return fmt.Errorf("preset %s: negative signal width %d", p.Name, p.SignalDim)
	case p.Classes < 2:
		return fmt.Errorf("preset %s: %d classes, need at least 2", p.Name, p.Classes)
	case p.NumTrain < 0 || p.NumValid < 0 || p.NumTest < 0:
		return fmt.Errorf("preset %s: negative split size", p.Name)
	case p.TrainFrac < 0 || p.ValidFrac < 0 || p.TrainFrac+p.ValidFrac > 1:
		return fmt.Errorf("preset %s: split fractions %g + %g invalid", p.Name, p.TrainFrac, p.ValidFrac)
	}
	return nil
}
