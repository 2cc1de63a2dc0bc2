package rmat

import (
	"runtime"
	"testing"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// BenchmarkRMATEdges draws 2^20 products-sim pairs on one goroutine.
func BenchmarkRMATEdges(b *testing.B) {
	p, _ := Lookup("products-sim")
	p.Pairs = 1 << 20
	perm := newIDPermutation(p.Scale, 1)
	b.SetBytes(8 * p.Pairs)
	for b.Loop() {
		rmatEdges(p, &perm, 1, 1, parallel.NewProgress(nil))
	}
}

func benchmarkGenerate(b *testing.B, name string) {
	p, err := Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d, err := Generate(p, Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(d.Graph.NumEdges()), "edges")
		runtime.KeepAlive(d)
	}
}

func BenchmarkGenerateTiny(b *testing.B) { benchmarkGenerate(b, "tiny") }

// BenchmarkGenerateProductsSim takes about 20-60 s per iteration on 2 cores
// and about 2.5 GB of memory: run it with -benchtime=1x.
func BenchmarkGenerateProductsSim(b *testing.B) { benchmarkGenerate(b, "products-sim") }
