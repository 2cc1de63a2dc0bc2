package rmat

import (
	"fmt"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/planted"
	"github.com/fanout-gnn/fanout/graph"
)

// Community labels' parameters (LabelsCommunity): the features' signal
// (centroids' distance at the preset's SignalDim, in noise units: weak,
// so that the neighbourhood tells more than a vertex's own row), the
// share of edges within a community and the degree skew.
const (
	communitySignal   = 2.0
	communityAffinity = 0.8
	communitySkew     = 3
)

// generateCommunity generates a one-type preset of the same size (2^Scale
// vertices, Pairs pairs drawn, symmetrized, without self loops or
// repeats), width and split as Generate's, as a degree-corrected planted
// partition of Classes communities (package planted): a vertex's label is
// its community, which most of its neighbours share, and its features
// are its community's centroid plus unit noise. Isolated vertices are
// unlabelled (-1) and in no split, as Generate's.
func generateCommunity(p Preset, opt Options) (*dataset.Dataset, error) {
	c := planted.Community{Vertices: p.NumNodes(), Pairs: p.Pairs, Classes: p.Classes, FeatDim: p.FeatDim,
		Signal: communitySignal, SignalDim: p.signalDim(), Affinity: communityAffinity, Skew: communitySkew}
	g, labels, feat, err := planted.OneType(c, planted.Options{Seed: opt.Seed, Threads: opt.Threads, Progress: opt.Progress})
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	for v := range g.NumNodes {
		if g.Degree(v) == 0 {
			labels[v] = -1
		}
	}
	train, valid, test, err := split(p, labels, opt.Seed)
	if err != nil {
		return nil, err
	}
	bo := graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true}
	return &dataset.Dataset{
		Name: p.Name, Graph: g, Features: feat, FeatDim: p.FeatDim, Labels: labels, NumClasses: p.Classes,
		Train: train, Valid: valid, Test: test, Symmetric: true, Preprocessing: dataset.GraphSteps(bo),
		Source: fmt.Sprintf("rmat preset %s, seed %d, labels community (a planted partition, not R-MAT)", p.Name, opt.Seed),
	}, nil
}
