package graph

import "slices"

// DegreeStats summarizes the distribution of stored (out-)degrees over all
// vertices, isolated ones included. Percentiles use the nearest-rank rule.
type DegreeStats struct {
	Min, Max      int64
	Mean          float64
	P50, P90, P99 int64
	Isolated      int64 // vertices of degree 0
}

// DegreeStats computes the degree summary; all zero for an empty graph.
func (g *CSR) DegreeStats() DegreeStats {
	n := g.NumNodes
	if n <= 0 {
		return DegreeStats{}
	}
	s := DegreeStats{Min: g.Degree(0), Mean: float64(g.NumEdges()) / float64(n)}
	for v := range n {
		d := g.Degree(v)
		s.Min, s.Max = min(s.Min, d), max(s.Max, d)
		if d == 0 {
			s.Isolated++
		}
	}
	pct := []int64{500, 900, 990} // per mille
	var out []int64
	if s.Max <= 4*n {
		out = histPercentiles(g, s.Max, pct)
	} else {
		out = sortPercentiles(g, pct)
	}
	s.P50, s.P90, s.P99 = out[0], out[1], out[2]
	return s
}

// rank is the 0-based nearest-rank position, ceil(p/1000 * n) - 1, of the
// per-mille percentile p among n > 0 values.
func rank(p, n int64) int64 {
	r := (p*n+999)/1000 - 1
	return min(max(r, 0), n-1)
}

// histPercentiles finds percentiles by counting degrees in [0, maxDeg].
func histPercentiles(g *CSR, maxDeg int64, pct []int64) []int64 {
	hist := make([]int64, maxDeg+1)
	for v := range g.NumNodes {
		hist[g.Degree(v)]++
	}
	out := make([]int64, len(pct))
	for i, p := range pct {
		r, seen := rank(p, g.NumNodes), int64(0)
		for d, c := range hist {
			seen += c
			if seen > r {
				out[i] = int64(d)
				break
			}
		}
	}
	return out
}

// sortPercentiles finds percentiles by sorting a copy of the degrees.
func sortPercentiles(g *CSR, pct []int64) []int64 {
	deg := make([]int64, g.NumNodes)
	for v := range deg {
		deg[v] = g.Degree(int64(v))
	}
	slices.Sort(deg)
	out := make([]int64, len(pct))
	for i, p := range pct {
		out[i] = deg[rank(p, g.NumNodes)]
	}
	return out
}
