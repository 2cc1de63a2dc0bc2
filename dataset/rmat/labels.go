package rmat

import (
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
)

// labelBlock is the number of vertices per work unit of plantLabels.
const labelBlock = 4096

// plantLabels returns [NumNodes] labels in [0, classes), -1 for isolated
// vertices. The label of v is the type most common among v's neighbours;
// among tied types c it is the one with the smallest (c - types[v]) mod
// classes, so v's own type wins a tie it takes part in. A vertex's features
// show its type, not its label: the label can only be read from the
// neighbourhood. types is [NumNodes] in [0, classes).
func plantLabels(g *graph.CSR, types []int32, classes, threads int, prog *parallel.Progress) []int32 {
	n := g.NumNodes
	labels := make([]int32, n)
	blocks := (n + labelBlock - 1) / labelBlock
	prog.Start("labels", n)
	parallel.Blocks(blocks, threads, func(k int64) {
		cnt := make([]int32, classes)
		lo, hi := k*labelBlock, min((k+1)*labelBlock, n)
		for v := lo; v < hi; v++ {
			labels[v] = voteLabel(g.Neighbors32(v), types, types[v], int32(classes), cnt)
		}
		prog.Add(hi - lo)
	})
	return labels
}

// voteLabel is the label rule of plantLabels for one vertex with neighbours
// nbrs and type own; -1 when nbrs is empty. cnt is [classes] scratch, zero on
// entry and on return.
func voteLabel(nbrs, types []int32, own, classes int32, cnt []int32) int32 {
	if len(nbrs) == 0 {
		return -1
	}
	for _, u := range nbrs {
		cnt[types[u]]++
	}
	best, bestCnt := int32(-1), int32(0)
	for d := range classes {
		c := own + d
		if c >= classes {
			c -= classes
		}
		if cnt[c] > bestCnt {
			best, bestCnt = c, cnt[c]
		}
	}
	for _, u := range nbrs {
		cnt[types[u]] = 0
	}
	return best
}
