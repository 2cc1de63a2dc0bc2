package dataset

import (
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

// bigRandom builds a dataset of n vertices with deg pseudo-random neighbours
// each (a cheap LCG; the values only need to be in range).
func bigRandom(n, deg int64) *Dataset {
	g := &graph.CSR{NumNodes: n, Indptr: make([]int64, n+1), Indices: make([]int32, n*deg)}
	x := uint64(1)
	for v := range n {
		for j := range deg {
			x = x*6364136223846793005 + 1442695040888963407
			g.Indices[v*deg+j] = int32((x >> 33) % uint64(n))
		}
		g.Indptr[v+1] = (v + 1) * deg
	}
	d := &Dataset{Graph: g, FeatDim: 4, NumClasses: 8, Features: make([]float32, n*4), Labels: make([]int32, n)}
	for v := range n {
		d.Labels[v] = int32(v % 8)
	}
	d.Train = []int64{0, 1, 2, 3}
	d.Test = make([]int64, n/2)
	for i := range d.Test {
		d.Test[i] = int64(2*i + 1)
	}
	return d
}

// BenchmarkValidate: 2^20 vertices, 32M edges; reports edges per second.
func BenchmarkValidate(b *testing.B) {
	d := bigRandom(1<<20, 32)
	b.SetBytes(int64(len(d.Graph.Indices)) * 4)
	b.ResetTimer()
	for b.Loop() {
		if err := d.Validate(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(d.Graph.NumEdges())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Medges/s")
}

// BenchmarkWriteOpen writes and reopens a 2^18-vertex, 8M-edge dataset.
func BenchmarkWriteOpen(b *testing.B) {
	d := bigRandom(1<<18, 32)
	dir := filepath.Join(b.TempDir(), "ds")
	for b.Loop() {
		if err := Write(dir, d); err != nil {
			b.Fatal(err)
		}
		o, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		o.Close()
	}
}
