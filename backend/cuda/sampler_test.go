package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// powerLawCSR draws a graph on n vertices whose degrees follow a heavy tail
// (a few rows of several thousand neighbours), with distinct neighbours
// per row in random order.
func powerLawCSR(r *rand.Rand, n int) *graph.CSR {
	indptr := make([]int64, n+1)
	var indices []int32
	seen := map[int32]bool{}
	for v := range n {
		d := int(2 / (r.Float64() + 0.0005))
		d = min(d, n/2)
		if v%97 == 0 {
			d = 0
		}
		clear(seen)
		for len(seen) < d {
			u := int32(r.IntN(n))
			if !seen[u] {
				seen[u] = true
				indices = append(indices, u)
			}
		}
		indptr[v+1] = int64(len(indices))
	}
	return &graph.CSR{NumNodes: int64(n), Indptr: indptr, Indices: indices}
}

// TestSampleLayerMatchesReference compares SampleLayer with package
// sample on a heavy-tailed graph, for fanouts on both sides of 32 (the
// register and shared-memory paths), larger than most degrees, and all.
func TestSampleLayerMatchesReference(t *testing.T) {
	b := openTest(t, Options{})
	r := rand.New(rand.NewPCG(7, 8))
	csr := powerLawCSR(r, 20000)
	g, err := b.UploadGraph(csr)
	if err != nil {
		t.Fatal(err)
	}
	const nDst = 3000
	dst := make([]int32, nDst)
	for i := range dst {
		dst[i] = int32(r.IntN(int(csr.NumNodes)))
	}
	dstBuf := upload(t, b, dst)
	for _, fanout := range []int{1, 5, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 1000, -1} {
		t.Run(fmt.Sprintf("fanout=%d", fanout), func(t *testing.T) {
			key := rng.Key{Seed: 0xfeedbeef12345 + uint64(fanout), Epoch: 3, Step: 1234, Stream: 2}
			indptr := make([]int32, nDst+1)
			total := sample.Layer(csr, dst, fanout, key, indptr, nil, 1)
			nbrs := make([]int32, total)
			sample.Layer(csr, dst, fanout, key, indptr, nbrs, 2)
			blk := &backend.Block{
				NumDst:   countBuf(t, b, nDst, nDst),
				NumEdges: countBuf(t, b, -1, total),
				NumSrc:   countBuf(t, b, -1, nDst),
				Indptr:   alloc(t, b, backend.I32, nDst+1),
				Nbrs:     alloc(t, b, backend.I32, total),
				SrcIDs:   alloc(t, b, backend.I32, nDst),
			}
			rr := backend.Rand{Seed: key.Seed, Stream: key.Stream,
				Clock: upload(t, b, []int32{int32(key.Epoch), int32(key.Step)})}
			b.SampleLayer(g, dstBuf, blk.NumDst, fanout, rr, blk)
			if got := readCount(t, b, blk.NumEdges); got != total {
				t.Fatalf("NumEdges %d, want %d", got, total)
			}
			equalI32(t, "Indptr", readI32(t, b, blk.Indptr, nDst+1), indptr)
			equalI32(t, "Nbrs", readI32(t, b, blk.Nbrs, total), nbrs)
		})
	}
}

// TestSamplingMatchesCPUBackend runs three hops of SampleLayer + Relabel,
// each hop's sources feeding the next as destinations through device
// counts, on the CUDA and CPU backends and requires identical blocks.
func TestSamplingMatchesCPUBackend(t *testing.T) {
	gpu := openTest(t, Options{})
	host := cpu.New(2)
	defer host.Close()
	r := rand.New(rand.NewPCG(9, 10))
	csr := powerLawCSR(r, 30000)
	seeds := distinctSeeds(r, csr.NumNodes, 512)
	fanouts := []int{15, 10, 40}
	run := func(be backend.Backend) [][]int32 {
		g, err := be.UploadGraph(csr)
		if err != nil {
			t.Fatal(err)
		}
		clock := upload(t, be, []int32{5, 77})
		dst := upload(t, be, append([]int32(nil), seeds...))
		nDst := countBuf(t, be, len(seeds), len(seeds))
		var out [][]int32
		for h, f := range fanouts {
			edgeCap := nDst.Cap * f
			srcCap := nDst.Cap + edgeCap
			blk := &backend.Block{
				NumDst:   nDst,
				NumEdges: countBuf(t, be, 0, edgeCap),
				NumSrc:   countBuf(t, be, 0, srcCap),
				Indptr:   alloc(t, be, backend.I32, nDst.Cap+1),
				Nbrs:     alloc(t, be, backend.I32, edgeCap),
				Indices:  alloc(t, be, backend.I32, edgeCap),
				SrcIDs:   alloc(t, be, backend.I32, srcCap),
			}
			be.SampleLayer(g, dst, nDst, f, backend.Rand{Seed: 42, Stream: uint32(h), Clock: clock}, blk)
			be.Relabel(g, blk)
			nd, ne, ns := readCount(t, be, blk.NumDst), readCount(t, be, blk.NumEdges), readCount(t, be, blk.NumSrc)
			out = append(out, []int32{int32(nd), int32(ne), int32(ns)},
				readI32(t, be, blk.Indptr, nd+1), readI32(t, be, blk.Nbrs, ne),
				readI32(t, be, blk.Indices, ne), readI32(t, be, blk.SrcIDs, ns))
			dst, nDst = blk.SrcIDs, blk.NumSrc
		}
		return out
	}
	want, got := run(host), run(gpu)
	names := []string{"counts", "Indptr", "Nbrs", "Indices", "SrcIDs"}
	for i := range want {
		equalI32(t, fmt.Sprintf("hop %d %s", i/5, names[i%5]), got[i], want[i])
	}
	t.Logf("hops: %v %v %v (dst, edges, src)", want[0], want[5], want[10])
}

// TestCaptureSampling replays three hops of sampling from a CUDA graph and
// requires the blocks of the second replay to equal the CPU backend's at the
// same (device-advanced) step.
func TestCaptureSampling(t *testing.T) {
	gpu := openTest(t, Options{})
	csr, seeds, fanouts := samplingCase(rand.New(rand.NewPCG(13, 14)))
	s := newSampler3(t, gpu, csr, seeds, fanouts)
	s.step(fanouts) // step 0, eager: grows scratch
	must(t, gpu)
	replayTwice(t, gpu, func() { s.step(fanouts) }) // steps 1 and 2
	if c := readI32(t, gpu, s.clock, 2); c[1] != 3 {
		t.Fatalf("clock %v after three steps", c)
	}

	sameAsCPU(t, gpu, s, csr, seeds, fanouts, 2)
}

// replayTwice captures the ops issue issues and launches the graph twice.
func replayTwice(t *testing.T, gpu *Backend, issue func()) {
	t.Helper()
	g := captureGraph(t, gpu, issue)
	defer g.Close()
	g.Launch()
	g.Launch()
	must(t, gpu)
}

// distinctSeeds draws k distinct vertices of n, in random order.
func distinctSeeds(r *rand.Rand, n int64, k int) []int32 {
	seeds := make([]int32, k)
	for i, p := range r.Perm(int(n))[:k] {
		seeds[i] = int32(p)
	}
	return seeds
}

// samplingCase is a graph with heavy-tailed degrees, 300 distinct seeds
// and three hops' fanouts (one above 32), for the capture tests.
func samplingCase(r *rand.Rand) (*graph.CSR, []int32, []int) {
	csr := powerLawCSR(r, 20000)
	seeds := distinctSeeds(r, csr.NumNodes, 300)
	return csr, seeds, []int{10, 5, 40}
}

// sameAsCPU fails unless the blocks of s (sampled on gpu) equal those the
// CPU backend samples from csr and seeds at step number step.
func sameAsCPU(t *testing.T, gpu backend.Backend, s *sampler3, csr *graph.CSR, seeds []int32, fanouts []int, step int32) {
	t.Helper()
	host := cpu.New(2)
	defer host.Close()
	ref := newSampler3(t, host, csr, seeds, fanouts)
	host.Write(ref.clock, 0, []int32{0, step})
	ref.step(fanouts)
	for h := range fanouts {
		gb, hb := s.blocks[h], ref.blocks[h]
		ne, ns := readCount(t, host, hb.NumEdges), readCount(t, host, hb.NumSrc)
		if g1, g2 := readCount(t, gpu, gb.NumEdges), readCount(t, gpu, gb.NumSrc); g1 != ne || g2 != ns {
			t.Fatalf("hop %d: edges %d sources %d, want %d %d", h, g1, g2, ne, ns)
		}
		equalI32(t, fmt.Sprintf("hop %d Nbrs", h), readI32(t, gpu, gb.Nbrs, ne), readI32(t, host, hb.Nbrs, ne))
		equalI32(t, fmt.Sprintf("hop %d Indices", h), readI32(t, gpu, gb.Indices, ne), readI32(t, host, hb.Indices, ne))
		equalI32(t, fmt.Sprintf("hop %d SrcIDs", h), readI32(t, gpu, gb.SrcIDs, ns), readI32(t, host, hb.SrcIDs, ns))
	}
}

// TestScan checks the single-pass scan against a host prefix sum for sizes
// around tile boundaries and with thousands of tiles, in place, repeatedly
// (the scan's scratch must come back clean).
func TestScan(t *testing.T) {
	b := openTest(t, Options{})
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 2047, 2048, 2049, 100000, 3000001} {
		for rep := range 2 {
			cp := n + 5
			live := n - rep // lenAdd = rep below
			if live < 0 {
				continue
			}
			data := make([]int32, cp)
			for i := range data {
				data[i] = int32(r.IntN(7))
			}
			buf := upload(t, b, data)
			lenC := countBuf(t, b, live, cp)
			total := countBuf(t, b, -1, 1)
			add := countBuf(t, b, 1000, 5000)
			c := b.begin("scan test")
			lp, tp, ap := c.count("len", lenC), c.count("total", total), c.count("add", add)
			c.scan(buf.(*buffer).ptr, buf.(*buffer).ptr, lp, cp, rep, tp, ap, 5000)
			c.end()
			got := readI32(t, b, buf, cp)
			want, acc := make([]int32, cp), int32(0)
			for i := range n {
				want[i] = acc
				acc += data[i]
			}
			copy(want[n:], data[n:])
			equalI32(t, fmt.Sprintf("scan of %d (+%d)", live, rep), got, want)
			if v := readCount(t, b, total); v != int(acc)+1000 {
				t.Fatalf("scan of %d: total %d, want %d", n, v, acc+1000)
			}
		}
	}
}

// TestRelabelGenerationWrap runs Relabel across the wrap of its per-graph
// generation counter (when the table is cleared) and compares every call
// with the CPU backend.
func TestRelabelGenerationWrap(t *testing.T) {
	gpu := openTest(t, Options{})
	host := cpu.New(1)
	defer host.Close()
	r := rand.New(rand.NewPCG(19, 20))
	csr := powerLawCSR(r, 5000)
	seeds := distinctSeeds(r, csr.NumNodes, 200)
	fanouts := []int{10, 5}
	s := newSampler3(t, gpu, csr, seeds, fanouts)
	ref := newSampler3(t, host, csr, seeds, fanouts)
	gpu.Write(s.g.(*devGraph).relState, 0, []int32{int32(-7), 0}) // generation 2^32-7
	for step := range 5 {                                         // 10 relabels: wraps once
		s.step(fanouts)
		ref.step(fanouts)
		for h := range fanouts {
			ns := readCount(t, host, ref.blocks[h].NumSrc)
			ne := readCount(t, host, ref.blocks[h].NumEdges)
			if got := readCount(t, gpu, s.blocks[h].NumSrc); got != ns {
				t.Fatalf("step %d hop %d: NumSrc %d, want %d", step, h, got, ns)
			}
			equalI32(t, fmt.Sprintf("step %d hop %d SrcIDs", step, h), readI32(t, gpu, s.blocks[h].SrcIDs, ns), readI32(t, host, ref.blocks[h].SrcIDs, ns))
			equalI32(t, fmt.Sprintf("step %d hop %d Indices", step, h), readI32(t, gpu, s.blocks[h].Indices, ne), readI32(t, host, ref.blocks[h].Indices, ne))
		}
	}
	if gen := readI32(t, gpu, s.g.(*devGraph).relState, 2); gen[0] < 0 || gen[0] > 10 || gen[1] != 0 {
		t.Errorf("relabel state %v after the wrap, want a small generation and a zero block counter", gen)
	}
}

// spaceRound is one space of TestRelabelSpaceGenerationWrap: destinations,
// two blocks' neighbours, and a block that Relabel relabels after them.
type spaceRound struct {
	dst, relDst []int32
	nbrs        [2][]int32
}

// run relabels the round on b over graph g: RelabelStart, two RelabelAdd
// calls, then Relabel of another block. It returns the space's count,
// source ids and local ids, then Relabel's.
func (r spaceRound) run(t *testing.T, b backend.Backend, g backend.Graph) (out [][]int32) {
	t.Helper()
	capSrc := len(r.dst) + len(r.nbrs[0]) + len(r.nbrs[1])
	srcIDs, nSrc := alloc(t, b, backend.I32, capSrc), countBuf(t, b, -1, capSrc)
	b.RelabelStart(g, upload(t, b, r.dst), countBuf(t, b, len(r.dst), len(r.dst)), srcIDs, nSrc)
	var blocks []*backend.Block
	for _, nbrs := range r.nbrs {
		blk := &backend.Block{NumEdges: countBuf(t, b, len(nbrs), len(nbrs)), Nbrs: upload(t, b, nbrs),
			Indices: alloc(t, b, backend.I32, len(nbrs))}
		b.RelabelAdd(g, blk, srcIDs, nSrc)
		blocks = append(blocks, blk)
	}
	n := readCount(t, b, nSrc)
	out = append(out, []int32{int32(n)}, readI32(t, b, srcIDs, n))
	for i, blk := range blocks {
		out = append(out, readI32(t, b, blk.Indices, len(r.nbrs[i])))
	}
	nbrs := r.nbrs[0]
	capSrc = len(r.relDst) + len(nbrs)
	src := make([]int32, capSrc)
	copy(src, r.relDst)
	blk := &backend.Block{
		NumDst:   countBuf(t, b, len(r.relDst), len(r.relDst)),
		NumEdges: countBuf(t, b, len(nbrs), len(nbrs)),
		NumSrc:   countBuf(t, b, -1, capSrc),
		Nbrs:     upload(t, b, nbrs),
		Indices:  alloc(t, b, backend.I32, len(nbrs)),
		SrcIDs:   upload(t, b, src),
	}
	b.Relabel(g, blk)
	n = readCount(t, b, blk.NumSrc)
	return append(out, []int32{int32(n)}, readI32(t, b, blk.SrcIDs, n), readI32(t, b, blk.Indices, len(nbrs)))
}

// TestRelabelSpaceGenerationWrap runs spaces (RelabelStart and RelabelAdd)
// and Relabel calls on one graph across the wrap of its generation
// counter, reached by a RelabelStart (which keeps its space's entries) or
// by a Relabel (which clears the table), and compares every result with
// the CPU backend's.
func TestRelabelSpaceGenerationWrap(t *testing.T) {
	for _, gen := range []int32{-5, -4} { // 2^32-5: RelabelStart wraps; 2^32-4: Relabel does
		t.Run(fmt.Sprintf("generation %d", uint32(gen)), func(t *testing.T) {
			gpu := openTest(t, Options{})
			host := cpu.New(1)
			defer host.Close()
			r := rand.New(rand.NewPCG(23, uint64(-gen)))
			const n = 3000
			csr := &graph.CSR{NumNodes: n, Indptr: make([]int64, n+1)}
			g, err := gpu.UploadGraph(csr)
			if err != nil {
				t.Fatal(err)
			}
			hg, err := host.UploadGraph(csr)
			if err != nil {
				t.Fatal(err)
			}
			gpu.Write(g.(*devGraph).relState, 0, []int32{gen, 0})
			ids := func(k int) []int32 {
				out := make([]int32, k)
				for i := range out {
					out[i] = int32(r.IntN(n / 3)) // repeats across rounds and blocks
				}
				return out
			}
			for round := range 5 {
				perm := r.Perm(n / 3)
				rd := spaceRound{dst: make([]int32, 100), relDst: make([]int32, 50), nbrs: [2][]int32{ids(400), ids(300)}}
				for i := range rd.dst {
					rd.dst[i] = int32(perm[i])
				}
				for i := range rd.relDst {
					rd.relDst[i] = int32(perm[200+i])
				}
				got, want := rd.run(t, gpu, g), rd.run(t, host, hg)
				for i := range want {
					equalI32(t, fmt.Sprintf("round %d result %d", round, i), got[i], want[i])
				}
			}
			if st := readI32(t, gpu, g.(*devGraph).relState, 2); st[0] < 0 || st[0] > 10 || st[1] != 0 {
				t.Errorf("relabel state %v after the wrap, want a small generation and a zero block counter", st)
			}
		})
	}
}
