package rmat

import "github.com/fanout-gnn/fanout/graph"

// EdgeHomophily is the fraction of stored edges (u, v) with both endpoints
// labelled whose labels agree; edges touching a vertex labelled -1 are not
// counted. It returns 0 when no edge counts. labels is [g.NumNodes].
func EdgeHomophily(g *graph.CSR, labels []int32) float64 {
	var same, total int64
	for v := range g.NumNodes {
		lv := labels[v]
		if lv < 0 {
			continue
		}
		for _, u := range g.Neighbors32(v) {
			if lu := labels[u]; lu >= 0 {
				total++
				if lu == lv {
					same++
				}
			}
		}
	}
	if total == 0 {
		return 0
	}
	return float64(same) / float64(total)
}

// ClassCounts returns [classes] counts of vertices per label; labels outside
// [0, classes) (such as -1) are not counted.
func ClassCounts(labels []int32, classes int) []int64 {
	out := make([]int64, classes)
	for _, c := range labels {
		if c >= 0 && int(c) < classes {
			out[c]++
		}
	}
	return out
}
