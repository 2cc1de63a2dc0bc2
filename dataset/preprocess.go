package dataset

import "github.com/fanout-gnn/fanout/graph"

// Preprocessing steps, as a manifest records them (the preprocessing key,
// in the order applied) and `fanout info` shows them. A manifest may also
// name steps of its own, as free text.
const (
	StepSymmetrize        = "symmetrize"         // the reverse of every edge added
	StepDropSelfLoops     = "drop-self-loops"    // edges v->v removed
	StepDedupEdges        = "dedup-edges"        // repeated edges stored once
	StepNormalizeFeatures = "normalize-features" // each feature row scaled to sum 1 in absolute value
)

// GraphSteps names the preprocessing graph.FromEdges applies under opt.
func GraphSteps(opt graph.BuildOptions) []string {
	var s []string
	if opt.Symmetrize {
		s = append(s, StepSymmetrize)
	}
	if opt.DropSelfLoops {
		s = append(s, StepDropSelfLoops)
	}
	if opt.Dedup {
		s = append(s, StepDedupEdges)
	}
	return s
}
