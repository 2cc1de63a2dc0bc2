// Package proxy holds the generators' tests' stand-ins for training: how
// well the nearest class mean reads labels from a vertex's own features,
// or from the mean of its neighbours', tells whether a graph's labels need
// the graph.
package proxy

import (
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

// NeighbourMean returns [g.NumNodes, dim] rows: the mean of x over each
// row's neighbours in g (zeros for a row without any). x is [vertices,
// dim] row-major, the vertices g's indices name (g's rows for a graph of
// one type, a relation's source type otherwise).
func NeighbourMean(g *graph.CSR, x []float32, dim int) []float32 {
	out := make([]float32, g.NumNodes*int64(dim))
	for v := range g.NumNodes {
		row := out[v*int64(dim) : (v+1)*int64(dim)]
		nb := g.Neighbors32(v)
		for _, u := range nb {
			for j, f := range x[int64(u)*int64(dim) : (int64(u)+1)*int64(dim)] {
				row[j] += f
			}
		}
		if len(nb) > 0 {
			for j := range row {
				row[j] /= float32(len(nb))
			}
		}
	}
	return out
}

// CentroidAccuracy fits class means of x ([labelled vertices, dim]
// row-major) on ds's training vertices and returns the fraction of its
// test vertices whose nearest mean is their class.
func CentroidAccuracy(ds *dataset.Dataset, x []float32, dim int) float64 {
	c := ds.NumClasses
	mean := make([]float64, c*dim)
	cnt := make([]float64, c)
	for _, v := range ds.Train {
		k := int(ds.Labels[v])
		cnt[k]++
		for j, f := range x[v*int64(dim) : (v+1)*int64(dim)] {
			mean[k*dim+j] += float64(f)
		}
	}
	for k := range c {
		for j := range dim {
			mean[k*dim+j] /= max(cnt[k], 1)
		}
	}
	correct := 0
	for _, v := range ds.Test {
		row := x[v*int64(dim) : (v+1)*int64(dim)]
		best, bestD := -1, 0.0
		for k := range c {
			d := 0.0
			for j, f := range row {
				e := float64(f) - mean[k*dim+j]
				d += e * e
			}
			if best < 0 || d < bestD {
				best, bestD = k, d
			}
		}
		if int32(best) == ds.Labels[v] {
			correct++
		}
	}
	return float64(correct) / float64(len(ds.Test))
}

// Relation is the nearest class mean's accuracy on a typed dataset's
// target: from the target's own features, and from the mean of its
// neighbours' features in relation r (whose source is the target's type).
func Relation(ds *dataset.Dataset, r int) (own, neighbours float64) {
	t := ds.Types[ds.Target]
	own = CentroidAccuracy(ds, t.Features, t.FeatDim)
	return own, CentroidAccuracy(ds, NeighbourMean(ds.Relations[r].Graph, t.Features, t.FeatDim), t.FeatDim)
}
