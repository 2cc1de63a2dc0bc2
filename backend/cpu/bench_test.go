package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// benchThreads are the thread counts the benchmarks run: 1, 2 and every
// processor where there are more.
func benchThreads() []int {
	if n := runtime.GOMAXPROCS(0); n > 2 {
		return []int{1, 2, n}
	}
	return []int{1, 2}
}

// benchBlock is a bottom-layer-sized block: nDst destinations with fanout
// edges each over nSrc sources.
func benchBlock(b *testing.B, be *Backend, nDst, fanout, nSrc int) *backend.Block {
	r := rand.New(rand.NewPCG(1, 1))
	indptr := make([]int32, nDst+1)
	indices := make([]int32, nDst*fanout)
	for i := range nDst {
		indptr[i+1] = int32((i + 1) * fanout)
	}
	for e := range indices {
		indices[e] = int32(r.IntN(nSrc))
	}
	up := func(s []int32) backend.Buffer {
		buf, err := be.Upload(s)
		if err != nil {
			b.Fatal(err)
		}
		return buf
	}
	return &backend.Block{
		NumDst:   backend.Count{Buf: up([]int32{int32(nDst)}), Cap: nDst},
		NumEdges: backend.Count{Buf: up([]int32{int32(len(indices))}), Cap: len(indices)},
		NumSrc:   backend.Count{Buf: up([]int32{int32(nSrc)}), Cap: nSrc},
		Indptr:   up(indptr), Indices: up(indices),
	}
}

// BenchmarkAggregate measures the products-sim bottom layer's aggregation
// (35,000 destinations, 5 edges each, 100 features) forward and backward.
func BenchmarkAggregate(b *testing.B) {
	const nDst, fanout, nSrc, dim = 35000, 5, 99000, 100
	for _, threads := range benchThreads() {
		be := New(threads)
		blk := benchBlock(b, be, nDst, fanout, nSrc)
		ew, _ := be.Alloc(backend.F32, nDst*fanout)
		be.MeanWeights(blk, ew)
		x, _ := be.Alloc(backend.F32, nSrc*dim)
		out, _ := be.Alloc(backend.F32, nDst*dim)
		b.Run(fmt.Sprintf("forward/threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				be.Aggregate(blk, ew, nil, x, dim, out)
			}
			b.ReportMetric(float64(nDst*fanout)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Medges/s")
		})
		b.Run(fmt.Sprintf("backward/threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				be.AggregateBackward(blk, ew, nil, out, dim, x)
			}
			b.ReportMetric(float64(nDst*fanout)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Medges/s")
		})
		if err := be.Sync(); err != nil {
			b.Fatal(err)
		}
		be.Close()
	}
}

// BenchmarkAggregateConcatTable measures products-sim's bottom layer
// reading its feature table in place: 51,495 destinations with 5 edges
// each over 130,616 sources, their rows by id from a table of 2,097,152 ×
// 100 float32 (800 MB: the rows come from memory, at random).
func BenchmarkAggregateConcatTable(b *testing.B) {
	const nDst, fanout, nSrc, dim, rows = 51495, 5, 130616, 100, 1 << 21
	r := rand.New(rand.NewPCG(2, 2))
	ids := make([]int32, nSrc)
	for j := range ids {
		ids[j] = int32(r.IntN(rows))
	}
	tab := make([]float32, rows*dim)
	for k := range tab {
		tab[k] = float32(k%13) - 6
	}
	for _, threads := range benchThreads() {
		be := New(threads)
		blk := benchBlock(b, be, nDst, fanout, nSrc)
		var err error
		if blk.SrcIDs, err = be.Upload(ids); err != nil {
			b.Fatal(err)
		}
		table, err := be.Upload(tab)
		if err != nil {
			b.Fatal(err)
		}
		ew, _ := be.Alloc(backend.F32, nDst*fanout)
		be.MeanWeights(blk, ew)
		out, _ := be.Alloc(backend.F32, nDst*2*dim)
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				be.AggregateConcatTable(blk, ew, table, dim, out)
			}
			b.ReportMetric(float64(nDst*(fanout+1))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
		if err := be.Sync(); err != nil {
			b.Fatal(err)
		}
		be.Close()
	}
}

// BenchmarkGather measures gathering 99,000 random rows of 100 features.
func BenchmarkGather(b *testing.B) {
	const rows, n, dim = 2_000_000, 99000, 100
	be := New(2)
	defer be.Close()
	table, _ := be.Alloc(backend.F32, rows*dim)
	r := rand.New(rand.NewPCG(2, 2))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(rows))
	}
	idb, _ := be.Upload(ids)
	cnt, _ := be.Upload([]int32{n})
	out, _ := be.Alloc(backend.F32, n*dim)
	for b.Loop() {
		be.Gather(table, dim, idb, backend.Count{Buf: cnt, Cap: n}, out)
	}
	b.ReportMetric(float64(n*dim*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkBiasActDropout measures bias+ReLU+dropout on a 35,000×256
// hidden layer (Philox words for every element).
func BenchmarkBiasActDropout(b *testing.B) {
	const rows, dim = 35000, 256
	for _, threads := range benchThreads() {
		be := New(threads)
		x, _ := be.Alloc(backend.F32, rows*dim)
		bias, _ := be.Alloc(backend.F32, dim)
		mask, _ := be.Alloc(backend.U8, rows*dim)
		cnt, _ := be.Upload([]int32{rows})
		clock, _ := be.Upload([]int32{1, 1})
		r := backend.Rand{Seed: 3, Stream: 128, Clock: clock}
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				be.BiasActDropout(x, backend.Count{Buf: cnt, Cap: rows}, dim, bias, true, 0.5, r, mask, x)
			}
			b.ReportMetric(float64(rows*dim)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
		be.Close()
	}
}

// BenchmarkBiasActDropoutBackward is the backward of BenchmarkBiasActDropout.
func BenchmarkBiasActDropoutBackward(b *testing.B) {
	const rows, dim = 35000, 256
	r := rand.New(rand.NewPCG(4, 4))
	y := make([]float32, rows*dim)
	m := make([]uint8, rows*dim)
	for i := range y {
		y[i] = float32(r.NormFloat64())
		m[i] = uint8(r.IntN(2))
	}
	for _, threads := range benchThreads() {
		be := New(threads)
		yb, _ := be.Upload(y)
		mb, _ := be.Upload(m)
		dy, _ := be.Alloc(backend.F32, rows*dim)
		dx, _ := be.Alloc(backend.F32, rows*dim)
		db, _ := be.Alloc(backend.F32, dim)
		cnt, _ := be.Upload([]int32{rows})
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				be.BiasActDropoutBackward(dy, yb, backend.Count{Buf: cnt, Cap: rows}, dim, true, 0.5, mb, dx, db)
			}
			b.ReportMetric(float64(rows*dim)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
		be.Close()
	}
}

// BenchmarkPoolRun measures one run of the worker pool with a part per
// thread that does nothing: the cost of handing out and joining a job.
func BenchmarkPoolRun(b *testing.B) {
	for _, threads := range benchThreads() {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			p := newPool(threads)
			defer p.close()
			var sink [64]int64
			for b.Loop() {
				p.run(threads, func(part int) { sink[part%64]++ })
			}
		})
	}
}
