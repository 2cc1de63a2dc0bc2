package export

import (
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// ginMeta records the fanouts GIN was trained with (gin_fanouts, per hop
// from the seeds, as the trainer's --fanouts) and how PyG's GIN sums
// relate to fanout's (gin_sum). PyG's GINConv sums every neighbour at
// weight 1. fanout's layer trained on k sampled neighbours weighs each of
// a vertex's deg neighbours min(deg, k)/deg in full-neighbour inference
// (the expectation of its training sum, nn/gin.go), which is 1 only where
// deg <= k: gin_sum is "exact" when every layer was trained on all
// neighbours (-1), so the exported model computes what `fanout eval
// --full-eval` does, and "capped" otherwise: PyG's model then sums vertices
// of more than k neighbours at a larger scale than the model was trained
// for, and its accuracy differs from fanout's.
func ginMeta(m nn.Config, meta map[string]string) {
	if m.GINFanouts == "" {
		meta["gin_sum"] = "exact" // trained before GINFanouts: full-degree sums
		return
	}
	meta["gin_fanouts"] = m.GINFanouts
	meta["gin_sum"] = "exact"
	if slices.ContainsFunc(strings.Split(m.GINFanouts, ","), func(f string) bool { return strings.TrimSpace(f) != "-1" }) {
		meta["gin_sum"] = "capped"
	}
}
