package cuda

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// Benchmarks at the sizes of the products-sim preset (DESIGN §6): 2M
// vertices, ~50 neighbours on average, batch 1024, fanouts 15, 10, 5,
// features 100, hidden 256. Each reports host wall time per op (ns/op) and
// device time per op from events (dev-us/op); bandwidth figures count bytes
// read plus written.

var (
	benchOnce  sync.Once
	benchGraph *graph.CSR
)

// benchCSR is a random graph on 2^21 vertices with heavy-tailed degrees
// (mean about 54), built in parallel.
func benchCSR() *graph.CSR {
	benchOnce.Do(func() {
		const n = 1 << 21
		r := rand.New(rand.NewPCG(11, 12))
		indptr := make([]int64, n+1)
		for v := range n {
			d := int64(8 / (r.Float64() + 0.004))
			indptr[v+1] = indptr[v] + min(d, 150000)
		}
		indices := make([]int32, indptr[n])
		workers := runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rr := rand.New(rand.NewPCG(uint64(w), 99))
				lo, hi := len(indices)*w/workers, len(indices)*(w+1)/workers
				for i := lo; i < hi; i++ {
					indices[i] = int32(rr.IntN(n))
				}
			}()
		}
		wg.Wait()
		benchGraph = &graph.CSR{NumNodes: n, Indptr: indptr, Indices: indices}
	})
	return benchGraph
}

// devTime runs f n times between two events and returns device time per run.
func devTime(b *testing.B, be *Backend, n int, f func()) time.Duration {
	start, err := be.Mark()
	if err != nil {
		b.Fatal(err)
	}
	defer start.Close()
	for range n {
		f()
	}
	stop, err := be.Mark()
	if err != nil {
		b.Fatal(err)
	}
	defer stop.Close()
	d, err := stop.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return d / time.Duration(n)
}

// measure runs f b.N times (host wall time) and reports device time and,
// when bytes > 0, bandwidth.
func measure(b *testing.B, be *Backend, bytes int64, f func()) {
	for range 3 {
		f()
	}
	must(b, be)
	b.ResetTimer()
	for range b.N {
		f()
	}
	must(b, be)
	b.StopTimer()
	d := devTime(b, be, 20, f)
	must(b, be)
	b.ReportMetric(float64(d.Nanoseconds())/1e3, "dev-us/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)/d.Seconds()/1e9, "GB/s")
	}
}

// sampler3 is the sampling part of one products-sim step on the device:
// three hops (15, 10, 5) of SampleLayer + Relabel from a seed buffer, the
// step counter advanced at the end.
type sampler3 struct {
	be     backend.Backend
	g      backend.Graph
	clock  backend.Buffer
	seeds  backend.Buffer
	nSeeds backend.Count
	blocks []*backend.Block
}

func newSampler3(tb testing.TB, be backend.Backend, csr *graph.CSR, seeds []int32, fanouts []int) *sampler3 {
	g, err := be.UploadGraph(csr)
	if err != nil {
		tb.Fatal(err)
	}
	s := &sampler3{be: be, g: g, clock: upload(tb, be, []int32{0, 0}), seeds: upload(tb, be, seeds),
		nSeeds: countBuf(tb, be, len(seeds), len(seeds))}
	dstCap := len(seeds)
	for _, f := range fanouts {
		edgeCap := dstCap * f
		srcCap := dstCap + edgeCap
		s.blocks = append(s.blocks, &backend.Block{
			NumEdges: countBuf(tb, be, 0, edgeCap), NumSrc: countBuf(tb, be, 0, srcCap),
			Indptr: alloc(tb, be, backend.I32, dstCap+1), Nbrs: alloc(tb, be, backend.I32, edgeCap),
			Indices: alloc(tb, be, backend.I32, edgeCap), SrcIDs: alloc(tb, be, backend.I32, srcCap),
		})
		dstCap = srcCap
	}
	return s
}

// step issues one step's sampling; fanouts as given to newSampler3.
func (s *sampler3) step(fanouts []int) {
	dst, nDst := s.seeds, s.nSeeds
	for h, f := range fanouts {
		blk := s.blocks[h]
		blk.NumDst = nDst
		s.be.SampleLayer(s.g, dst, nDst, f, backend.Rand{Seed: 7, Stream: uint32(h), Clock: s.clock}, blk)
		s.be.Relabel(s.g, blk)
		dst, nDst = blk.SrcIDs, blk.NumSrc
	}
	s.be.AddCount(backend.Count{Buf: s.clock, Off: 1, Cap: 1}, 1, nil)
}

// BenchmarkSample3Hops samples and relabels three hops (15, 10, 5) from
// 1024 seeds, the sampling work of one products-sim step: issued eagerly,
// and replayed from a captured CUDA graph (device work without launch cost).
func BenchmarkSample3Hops(b *testing.B) {
	fanouts := []int{15, 10, 5}
	csr := benchCSR()
	r := rand.New(rand.NewPCG(1, 1))
	seeds := make([]int32, 1024)
	for i := range seeds {
		seeds[i] = int32(r.IntN(int(csr.NumNodes)))
	}
	for _, mode := range []string{"eager", "graph"} {
		b.Run(mode, func(b *testing.B) {
			be := openTest(b, Options{})
			s := newSampler3(b, be, csr, seeds, fanouts)
			f := func() { s.step(fanouts) }
			if mode == "graph" {
				s.step(fanouts) // grow scratch before capturing
				must(b, be)
				g := captureGraph(b, be, func() { s.step(fanouts) })
				defer g.Close()
				f = g.Launch
			}
			be.ResetStats()
			measure(b, be, 0, f)
			st := be.Stats()
			edges := 0
			for _, blk := range s.blocks {
				edges += readCount(b, be, blk.NumEdges)
			}
			b.ReportMetric(float64(edges), "edges/step")
			b.ReportMetric(float64(readCount(b, be, s.blocks[2].NumSrc)), "inputs/step")
			b.ReportMetric(float64(st.Launches)/float64(b.N+23), "launches/step")
		})
	}
}

// BenchmarkGather gathers 100k random rows of a [2M, dim] float32 table.
func BenchmarkGather(b *testing.B) {
	for _, dim := range []int{100, 128, 256, 47} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			be := openTest(b, Options{})
			const rows, n = 1 << 21, 100000
			table := alloc(b, be, backend.F32, rows*dim)
			be.Fill(table, 1)
			r := rand.New(rand.NewPCG(2, 2))
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(r.IntN(rows))
			}
			idBuf, out := upload(b, be, ids), alloc(b, be, backend.F32, n*dim)
			cnt := countBuf(b, be, n, n)
			measure(b, be, int64(n)*int64(dim)*8+n*4, func() { be.Gather(table, dim, idBuf, cnt, out) })
		})
	}
}

// BenchmarkGatherBF16 gathers 100k random rows of a [2M, dim] bfloat16
// table, widened to float32.
func BenchmarkGatherBF16(b *testing.B) {
	for _, dim := range []int{100, 128, 47} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			be := openTest(b, Options{})
			const rows, n = 1 << 21, 100000
			table := upload(b, be, make([]uint16, rows*dim))
			ids, out, cnt := gatherIDs(b, be, rows, n, dim)
			measure(b, be, int64(n)*int64(dim)*6+n*4, func() { be.Gather(table, dim, ids, cnt, out) })
		})
	}
}

// BenchmarkGatherTiered gathers 100k random rows from two tiers: the first
// half of a [2M, dim] table cached in device memory, the rest read from
// host memory in place, float32 or bfloat16.
func BenchmarkGatherTiered(b *testing.B) {
	for _, bf16 := range []bool{false, true} {
		for _, dim := range []int{128, 47} {
			b.Run(fmt.Sprintf("bf16=%t/dim=%d", bf16, dim), func(b *testing.B) {
				be := openTest(b, Options{})
				const rows, n = 1 << 21, 100000
				var host, cache backend.Buffer
				if bf16 {
					host, cache = hostTable(b, be, make([]uint16, rows*dim)), upload(b, be, make([]uint16, rows/2*dim))
				} else {
					host, cache = hostTable(b, be, make([]float32, rows*dim)), alloc(b, be, backend.F32, rows/2*dim)
				}
				slot := make([]int32, rows)
				for v := range slot {
					slot[v] = -1
					if v < rows/2 {
						slot[v] = int32(v)
					}
				}
				slotBuf, stats := upload(b, be, slot), alloc(b, be, backend.I64, 2)
				ids, out, cnt := gatherIDs(b, be, rows, n, dim)
				measure(b, be, 0, func() { be.GatherTiered(cache, slotBuf, host, nil, dim, ids, cnt, out, stats) })
			})
		}
	}
}

// gatherIDs are n random ids below rows, an F32 [n, dim] output and the
// live count n.
func gatherIDs(b *testing.B, be *Backend, rows, n, dim int) (ids, out backend.Buffer, cnt backend.Count) {
	r := rand.New(rand.NewPCG(2, 2))
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(r.IntN(rows))
	}
	return upload(b, be, v), alloc(b, be, backend.F32, n*dim), countBuf(b, be, n, n)
}

// hostTable is data in host memory the device reads in place.
func hostTable(b *testing.B, be *Backend, data any) backend.Buffer {
	buf, err := be.UploadHost(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Free(buf) })
	return buf
}

// aggBlock builds a block of nDst destinations with fanout random
// neighbours each among nSrc sources.
func aggBlock(b *testing.B, be *Backend, nDst, nSrc, fanout int) *backend.Block {
	r := rand.New(rand.NewPCG(3, 3))
	indptr := make([]int32, nDst+1)
	indices := make([]int32, nDst*fanout)
	for i := range nDst {
		indptr[i+1] = int32((i + 1) * fanout)
		for k := range fanout {
			indices[i*fanout+k] = int32(r.IntN(nSrc))
		}
	}
	return &backend.Block{
		NumDst: countBuf(b, be, nDst, nDst), NumEdges: countBuf(b, be, len(indices), len(indices)),
		NumSrc: countBuf(b, be, nSrc, nSrc), Indptr: upload(b, be, indptr), Indices: upload(b, be, indices),
	}
}

// BenchmarkAggregate: a layer of 35k destinations with 15 sampled
// neighbours each among 99k sources (about products-sim's bottom layer,
// made heavier), forward and backward at several widths.
func BenchmarkAggregate(b *testing.B) {
	const nDst, nSrc, fanout = 35000, 99000, 15
	for _, dim := range []int{100, 256, 47} {
		for _, dir := range []string{"fwd", "bwd"} {
			b.Run(fmt.Sprintf("%s/dim=%d", dir, dim), func(b *testing.B) {
				be := openTest(b, Options{})
				blk := aggBlock(b, be, nDst, nSrc, fanout)
				ew := alloc(b, be, backend.F32, nDst*fanout)
				be.MeanWeights(blk, ew)
				x := alloc(b, be, backend.F32, nSrc*dim)
				be.Fill(x, 0.5)
				out := alloc(b, be, backend.F32, nDst*dim)
				bytes := int64(nDst*fanout)*int64(dim)*4 + int64(nDst*dim)*4
				if dir == "fwd" {
					measure(b, be, bytes, func() { be.Aggregate(blk, ew, nil, x, dim, out) })
				} else {
					measure(b, be, 2*bytes, func() { be.AggregateBackward(blk, ew, nil, out, dim, x) })
				}
			})
		}
	}
}

// BenchmarkLinearBackwardWeight compares reading the count back (exact)
// with the capacity GEMM and padding stash, 35k of 40k rows.
func BenchmarkLinearBackwardWeight(b *testing.B) {
	const cp, live, in, out = 40000, 35000, 256, 256
	for _, exact := range []bool{false, true} {
		b.Run(fmt.Sprintf("exact=%t", exact), func(b *testing.B) {
			be := openTest(b, Options{CapacityGemm: !exact})
			x, dy := alloc(b, be, backend.F32, cp*in), alloc(b, be, backend.F32, cp*out)
			be.Fill(x, 0.25)
			be.Fill(dy, 0.5)
			dw := alloc(b, be, backend.F32, in*out)
			n := countBuf(b, be, live, cp)
			measure(b, be, 0, func() { be.LinearBackwardWeight(x, dy, n, in, out, dw, false) })
		})
	}
}

// BenchmarkGemm measures SGEMM throughput (float32 and TF32) for the floor:
// a Linear of m rows, m wide in and out.
func BenchmarkGemm(b *testing.B) {
	const m = 4096
	for _, tf32 := range []bool{false, true} {
		b.Run(fmt.Sprintf("tf32=%t", tf32), func(b *testing.B) {
			be := openTest(b, Options{TF32: tf32})
			x, y, z := alloc(b, be, backend.F32, m*m), alloc(b, be, backend.F32, m*m), alloc(b, be, backend.F32, m*m)
			be.Fill(x, 0.5)
			be.Fill(y, 0.25)
			rows := countBuf(b, be, m, m)
			measure(b, be, 0, func() { be.Linear(x, rows, y, m, m, z, false) })
			b.ReportMetric(2*float64(m)*m*m/1e12/(float64(b.Elapsed().Seconds())/float64(b.N)), "TFLOP/s-wall")
		})
	}
}

// BenchmarkLaunch is the host cost of one small kernel launch, and of a
// launch followed by a 4-byte read-back (a host sync).
func BenchmarkLaunch(b *testing.B) {
	be := openTest(b, Options{})
	cnt := countBuf(b, be, 0, 1)
	b.Run("launch", func(b *testing.B) {
		measure(b, be, 0, func() { be.AddCount(cnt, 1, nil) })
	})
	b.Run("launch+read", func(b *testing.B) {
		v := make([]int32, 1)
		measure(b, be, 0, func() {
			be.AddCount(cnt, 1, nil)
			be.Read(v, cnt.Buf, 0)
		})
	})
}

// BenchmarkUploadGraph is the time to make a products-sim-sized graph
// resident (host to device copies of indptr and indices).
func BenchmarkUploadGraph(b *testing.B) {
	be := openTest(b, Options{})
	csr := benchCSR()
	b.ResetTimer()
	for range b.N {
		g, err := be.UploadGraph(csr)
		if err != nil {
			b.Fatal(err)
		}
		must(b, be)
		be.FreeGraph(g)
	}
	b.ReportMetric(float64(csr.NumEdges()*4+int64(len(csr.Indptr))*8)/1e9/(b.Elapsed().Seconds()/float64(b.N)), "GB/s")
}

// BenchmarkAggregateBackwardDet compares the atomic aggregation backward
// with the deterministic one (Options.Deterministic) at products-sim's
// shapes: the bottom block (50k destinations, 250k edges, 130k sources,
// dim 100) and the middle one (8k, 76k, 50k, dim 256).
func BenchmarkAggregateBackwardDet(b *testing.B) {
	shapes := []struct {
		name                    string
		nDst, nEdges, nSrc, dim int
	}{{"bottom", 50000, 250000, 130000, 100}, {"middle", 8000, 76000, 50000, 256}}
	for _, s := range shapes {
		for _, det := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/deterministic=%t", s.name, det), func(b *testing.B) {
				be := openTest(b, Options{Deterministic: det})
				r := rand.New(rand.NewPCG(5, 5))
				indptr := make([]int32, s.nDst+1)
				indices := make([]int32, s.nEdges)
				for i := range s.nDst {
					indptr[i+1] = int32(int64(i+1) * int64(s.nEdges) / int64(s.nDst))
				}
				for e := range indices {
					indices[e] = int32(r.IntN(s.nSrc))
				}
				blk := &backend.Block{
					NumDst: countBuf(b, be, s.nDst, s.nDst), NumEdges: countBuf(b, be, s.nEdges, s.nEdges),
					NumSrc: countBuf(b, be, s.nSrc, s.nSrc), Indptr: upload(b, be, indptr), Indices: upload(b, be, indices),
				}
				ew, sw := alloc(b, be, backend.F32, s.nEdges), alloc(b, be, backend.F32, s.nDst)
				be.MeanWeights(blk, ew)
				be.Fill(sw, 0.5)
				dout, dx := alloc(b, be, backend.F32, s.nDst*s.dim), alloc(b, be, backend.F32, s.nSrc*s.dim)
				be.Fill(dout, 0.25)
				be.Fill(dx, 0)
				bytes := int64(s.nEdges)*int64(s.dim)*8 + int64(s.nSrc)*int64(s.dim)*8
				measure(b, be, bytes, func() { be.AggregateBackward(blk, ew, sw, dout, s.dim, dx) })
			})
		}
	}
}
