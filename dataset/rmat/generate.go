package rmat

import (
	"fmt"
	"runtime/debug"

	"github.com/fanout-gnn/fanout/internal/parallel"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

// Options controls Generate.
type Options struct {
	Seed    uint64
	Threads int // worker goroutines; <= 0 means GOMAXPROCS. The result does not depend on it.
	// Progress, when non-nil, is told how far each stage has come ("edges",
	// then the graph builder's "count", "scatter", "sort", "compact", then
	// "labels", "features"). Calls are serialized but may come from any
	// goroutine.
	Progress func(stage string, done, total int64)
}

// Generate builds the preset's dataset in memory (Name = p.Name).
//
// Graph: 2^Scale vertices; p.Pairs R-MAT pairs (per level, quadrant (0,0),
// (0,1), (1,0), (1,1) with probability A, B, C, 1-A-B-C); vertex ids mapped
// through a seeded pseudo-random bijection of [0, 2^Scale); undirected (both
// directions stored), without self loops or duplicate edges, rows sorted.
//
// Labels: every vertex has a latent type in [0, Classes) (the highest-degree
// 1% dealt for balance, the rest uniform). Its features are its type's
// centroid (Signal apart from other centroids at width SignalDim, with the
// same signal per entry at any width) plus unit Gaussian-like noise, so the
// type is readable from the vertex's own features. Its label is the
// type most common among its neighbours (ties: the tied type nearest after
// its own type, cyclically), so the label is readable from the neighbours'
// features but only weakly from its own. Isolated vertices get label -1 and
// belong to no split. Splits are drawn at random from the labelled vertices
// and sorted ascending.
//
// Peak memory is about 8 bytes per pair (the pair list) plus 4 bytes per
// stored edge plus the features (4 * FeatDim bytes per vertex); the pair list
// is released before the features are made.
func Generate(p Preset, opt Options) (*dataset.Dataset, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	threads := parallel.Threads(opt.Threads)
	prog := parallel.NewProgress(opt.Progress)
	n := p.NumNodes()

	perm := newIDPermutation(p.Scale, opt.Seed)
	src, dst := rmatEdges(p, &perm, opt.Seed, threads, prog)
	bo := graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true, Threads: threads, Progress: opt.Progress}
	g, err := graph.FromEdges(n, src, dst, bo)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	// The pair list is dead: hand its memory back before the features need it.
	debug.FreeOSMemory()

	types := plantTypes(g, p.Classes, opt.Seed)
	labels := plantLabels(g, types, p.Classes, threads, prog)
	train, valid, test, err := split(p, labels, opt.Seed)
	if err != nil {
		return nil, err
	}
	feat := makeFeatures(p, types, opt.Seed, threads, prog)
	return &dataset.Dataset{
		Name:          p.Name,
		Graph:         g,
		Features:      feat,
		FeatDim:       p.FeatDim,
		Labels:        labels,
		NumClasses:    p.Classes,
		Train:         train,
		Valid:         valid,
		Test:          test,
		Symmetric:     true,
		Preprocessing: dataset.GraphSteps(bo),
		Source:        fmt.Sprintf("rmat preset %s, seed %d", p.Name, opt.Seed),
	}, nil
}
