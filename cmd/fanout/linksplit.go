package main

import (
	"flag"
	"fmt"

	"github.com/fanout-gnn/fanout/dataset/linksplit"
)

// linkSplitFlags are gen's and import's flags of a link task.
type linkSplitFlags struct {
	split     *string
	negatives *int
	seed      *uint64
}

// addLinkSplitFlags registers --link-split, --link-negatives and
// --link-seed.
func addLinkSplitFlags(fs *flag.FlagSet) linkSplitFlags {
	return linkSplitFlags{
		split:     fs.String("link-split", "", "make a link-prediction task: TRAIN,VALID,TEST fractions of the undirected edges (e.g. 0.85,0.05,0.1); validation and test edges leave the graph"),
		negatives: fs.Int("link-negatives", 1, "with --link-split: fixed negatives stored per validation and test edge (1 for ROC-AUC and AP; more for MRR)"),
		seed:      fs.Uint64("link-seed", 1, "with --link-split: the seed of the split and of its negatives"),
	}
}

// options checks the flags before any work: nil without --link-split.
func (f linkSplitFlags) options() (*linksplit.Options, error) {
	if *f.split == "" {
		return nil, nil
	}
	fr, err := linksplit.Parse(*f.split)
	if err != nil {
		return nil, fmt.Errorf("--link-split: %w", err)
	}
	if *f.negatives < 1 {
		return nil, fmt.Errorf("--link-negatives %d: want at least 1", *f.negatives)
	}
	return &linksplit.Options{Fractions: fr, Negatives: *f.negatives, Seed: *f.seed}, nil
}
