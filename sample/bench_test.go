package sample

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
	"github.com/fanout-gnn/fanout/rng"
)

var benchScale = flag.Int("sample.scale", 21,
	"R-MAT scale of the sampling benchmark graph (21 is products-sim's size; -short uses 17)")

// benchGraph builds the benchmark graph once per test binary: R-MAT with
// (a, b, c) = (0.57, 0.19, 0.19), 29.6 pairs per vertex (products-sim: 62M
// pairs on 2^21 vertices), ids permuted, symmetrized, self loops and
// duplicates removed.
var benchGraph = sync.OnceValues(func() (*graph.CSR, time.Duration) {
	scale := *benchScale
	if testing.Short() {
		scale = min(scale, 17)
	}
	start := time.Now()
	g := rmatGraph(scale, int64(62_000_000)>>(21-min(scale, 21))<<max(scale-21, 0), 1)
	return g, time.Since(start)
})

// benchWorkers is how many goroutines build the benchmark graph; the R-MAT
// pairs depend on it (each worker draws its share from a generator of its
// own).
const benchWorkers = 2

// rmatGraph generates an undirected R-MAT graph as described at benchGraph.
func rmatGraph(scale int, pairs int64, seed uint64) *graph.CSR {
	n := 1 << scale
	src := make([]int32, pairs)
	dst := make([]int32, pairs)
	parallel.Range(pairs, benchWorkers, func(w int, lo, hi int64) {
		r := rand.New(rand.NewPCG(seed, uint64(w)))
		for i := lo; i < hi; i++ {
			src[i], dst[i] = rmatPair(r, scale)
		}
	})
	perm := rand.New(rand.NewPCG(seed, 1000)).Perm(n)
	indptr := make([]int64, n+1)
	for i := range src {
		u, v := int32(perm[src[i]]), int32(perm[dst[i]])
		src[i], dst[i] = u, v
		if u != v {
			indptr[u+1]++
			indptr[v+1]++
		}
	}
	for v := 0; v < n; v++ {
		indptr[v+1] += indptr[v]
	}
	indices := make([]int32, indptr[n])
	pos := slices.Clone(indptr[:n])
	for i := range src {
		u, v := src[i], dst[i]
		if u != v {
			indices[pos[u]] = v
			pos[u]++
			indices[pos[v]] = u
			pos[v]++
		}
	}
	return dedupRows(&graph.CSR{NumNodes: int64(n), Indptr: indptr, Indices: indices})
}

// rmatPair draws one R-MAT edge: at each level pick a quadrant with
// probabilities (0.57, 0.19, 0.19, 0.05), 16 random bits per level.
func rmatPair(r *rand.Rand, scale int) (int32, int32) {
	const a, ab, abc = 0.57 * 65536, 0.76 * 65536, 0.95 * 65536
	var u, v int32
	var bits uint64
	for l := 0; l < scale; l++ {
		if l%4 == 0 {
			bits = r.Uint64()
		}
		x := float64(bits & 0xffff)
		bits >>= 16
		u, v = u<<1, v<<1
		switch {
		case x < a:
		case x < ab:
			v |= 1
		case x < abc:
			u |= 1
		default:
			u, v = u|1, v|1
		}
	}
	return u, v
}

// dedupRows sorts every row and removes repeated neighbours, in place.
func dedupRows(g *graph.CSR) *graph.CSR {
	n := int(g.NumNodes)
	newDeg := make([]int64, n)
	parallel.Range(int64(n), benchWorkers, func(_ int, lo, hi int64) {
		for v := lo; v < hi; v++ {
			row := g.Indices[g.Indptr[v]:g.Indptr[v+1]]
			slices.Sort(row)
			newDeg[v] = int64(len(slices.Compact(row)))
		}
	})
	var out int64
	for v := 0; v < n; v++ {
		start := g.Indptr[v]
		copy(g.Indices[out:], g.Indices[start:start+newDeg[v]])
		g.Indptr[v] = out
		out += newDeg[v]
	}
	g.Indptr[n] = out
	g.Indices = g.Indices[:out:out]
	return g
}

// benchBatches are distinct random seed sets of size batch.
func benchBatches(g *graph.CSR, batch, count int) [][]int32 {
	r := rand.New(rand.NewPCG(7, 7))
	out := make([][]int32, count)
	for i := range out {
		out[i] = make([]int32, 0, batch)
		seen := map[int32]bool{}
		for len(out[i]) < batch {
			v := int32(r.IntN(int(g.NumNodes)))
			if !seen[v] {
				seen[v] = true
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

var benchFanouts = []int{15, 10, 5}

const benchBatch, benchBatchCount = 1024, 32

// BenchmarkLayer times Layer alone over the three hops of products-sim
// batches (frontiers precomputed, each batch with its own step).
func BenchmarkLayer(b *testing.B) {
	g, built := benchGraph()
	b.Logf("graph: %d vertices, %d edges, built in %v", g.NumNodes, g.NumEdges(), built.Round(time.Millisecond))
	batches := benchBatches(g, benchBatch, benchBatchCount)
	s, err := NewSampler(g, benchFanouts, 2)
	if err != nil {
		b.Fatal(err)
	}
	fronts := make([][][]int32, len(batches)) // [batch][hop] destinations
	for i, seeds := range batches {
		mb, err := s.Sample(seeds, rng.Key{Seed: 1, Step: uint32(i)})
		if err != nil {
			b.Fatal(err)
		}
		for h := range benchFanouts {
			fronts[i] = append(fronts[i], mb.Blocks[len(benchFanouts)-1-h].SrcIDs[:mb.Blocks[len(benchFanouts)-1-h].NumDst])
		}
	}
	for _, threads := range []int{1, 2} {
		b.Run(threadName(threads), func(b *testing.B) {
			indptr := make([]int32, g.NumNodes+1)
			nbrs := make([]int32, 4<<20)
			edges := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bi := i % len(fronts)
				for h, f := range benchFanouts {
					key := rng.Key{Seed: 1, Step: uint32(bi), Stream: uint32(h)}
					edges += Layer(g, fronts[bi][h], f, key, indptr, nbrs, threads)
				}
			}
			reportEdges(b, edges, threads)
		})
	}
}

// BenchmarkSample times the whole sampler (three hops, relabelling, output
// records) on products-sim batches, one fresh step per batch.
func BenchmarkSample(b *testing.B) {
	g, _ := benchGraph()
	batches := benchBatches(g, benchBatch, benchBatchCount)
	for _, threads := range []int{1, 2} {
		b.Run(threadName(threads), func(b *testing.B) {
			s, err := NewSampler(g, benchFanouts, threads)
			if err != nil {
				b.Fatal(err)
			}
			mb := &MiniBatch{}
			edges, inputs := 0, 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.SampleInto(batches[i%len(batches)], rng.Key{Seed: 2, Step: uint32(i)}, mb); err != nil {
					b.Fatal(err)
				}
				for _, blk := range mb.Blocks {
					edges += blk.NumEdges()
				}
				inputs += mb.Blocks[0].NumSrc()
			}
			reportEdges(b, edges, threads)
			b.ReportMetric(float64(edges)/float64(b.N), "edges/batch")
			b.ReportMetric(float64(inputs)/float64(b.N), "inputs/batch")
		})
	}
}

func threadName(t int) string { return fmt.Sprintf("threads=%d", t) }

// reportEdges reports sampled edges per second, in total and per thread.
func reportEdges(b *testing.B, edges, threads int) {
	rate := float64(edges) / b.Elapsed().Seconds()
	b.ReportMetric(rate/1e6, "Medges/s")
	b.ReportMetric(rate/1e6/float64(threads), "Medges/s/core")
}
