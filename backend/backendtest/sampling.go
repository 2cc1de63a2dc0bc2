package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// randomCSR draws a graph on n vertices with distinct neighbours per row:
// most rows short, some long (up to maxDeg), some empty.
func (e *env) randomCSR(n, maxDeg int) *graph.CSR { return e.randomRelation(n, n, maxDeg) }

// randomRelation draws a relation's CSR as randomCSR does: rows vertices
// of its destination type, each with distinct neighbours among the cols
// vertices of its source type.
func (e *env) randomRelation(rows, cols, maxDeg int) *graph.CSR {
	indptr := make([]int64, rows+1)
	var indices []int32
	seen := make(map[int32]bool)
	for v := range rows {
		d := e.rnd.IntN(8)
		if e.rnd.IntN(10) == 0 {
			d = e.rnd.IntN(maxDeg + 1)
		}
		d = min(d, cols)
		clear(seen)
		for len(seen) < d {
			u := int32(e.rnd.IntN(cols))
			if !seen[u] {
				seen[u] = true
				indices = append(indices, u)
			}
		}
		indptr[v+1] = int64(len(indices))
	}
	return &graph.CSR{NumNodes: int64(rows), Indptr: indptr, Indices: indices}
}

// sampled is the reference result of one hop.
type sampled struct {
	indptr, nbrs []int32
	total        int
}

func refLayer(g *graph.CSR, dst []int32, fanout int, key rng.Key) sampled {
	indptr := make([]int32, len(dst)+1)
	total := sample.Layer(g, dst, fanout, key, indptr, nil, 1)
	nbrs := make([]int32, total)
	sample.Layer(g, dst, fanout, key, indptr, nbrs, 1)
	return sampled{indptr, nbrs, total}
}

// sampleBlock allocates a block with the given capacities (NumDst shares
// nDst) and runs SampleLayer into it.
func (e *env) sampleBlock(g backend.Graph, dst []int32, nDst backend.Count, fanout int, r backend.Rand, capEdges, capSrc int) *backend.Block {
	blk := &backend.Block{
		NumDst:   nDst,
		NumEdges: e.count(-3, capEdges),
		NumSrc:   e.count(-3, capSrc),
		Indptr:   e.poisonI32(nDst.Cap + 1),
		Nbrs:     e.poisonI32(capEdges),
		Indices:  e.poisonI32(capEdges),
		SrcIDs:   e.poisonI32(capSrc),
	}
	e.be.SampleLayer(g, e.upload(dst), nDst, fanout, r, blk)
	return blk
}

func (e *env) uploadGraph(csr *graph.CSR) backend.Graph {
	e.t.Helper()
	g, err := e.be.UploadGraph(csr)
	if err != nil {
		e.t.Fatalf("UploadGraph: %v", err)
	}
	return g
}

// sampleCase draws a graph, destinations and a key for sampling tests.
func (e *env) sampleCase(nDst, capDst int) (*graph.CSR, backend.Graph, []int32, rng.Key, backend.Rand) {
	csr := e.randomCSR(500, 120)
	g := e.uploadGraph(csr)
	dst := make([]int32, capDst)
	for i := range dst {
		dst[i] = int32(e.rnd.IntN(500))
	}
	for i := nDst; i < capDst; i++ {
		dst[i] = 1 << 30 // past the count
	}
	key := rng.Key{Seed: 0x0123456789abcdef, Epoch: 2, Step: 41, Stream: 1}
	r := e.rand(key.Seed, key.Stream, int32(key.Epoch), int32(key.Step))
	return csr, g, dst, key, r
}

func testSampleLayer(e *env) {
	for _, fanout := range []int{-1, 0, 1, 3, 10, 40} {
		name := fmt.Sprintf("SampleLayer fanout=%d", fanout)
		const live, capDst = 150, 160
		csr, g, dst, key, r := e.sampleCase(live, capDst)
		ref := refLayer(csr, dst[:live], fanout, key)
		blk := e.sampleBlock(g, dst, e.count(live, capDst), fanout, r, ref.total+11, capDst+50)
		if got := e.readCount(blk.NumEdges); got != ref.total {
			e.t.Errorf("%s: NumEdges %d, want %d", name, got, ref.total)
		}
		checkEqual(e.t, name+" Indptr", e.readI32(blk.Indptr, live+1), ref.indptr, 0)
		checkEqual(e.t, name+" Nbrs", e.readI32(blk.Nbrs, ref.total), ref.nbrs, 0)
		checkEqual(e.t, name+" SrcIDs (destinations)", e.readI32(blk.SrcIDs, live), dst[:live], 0)
	}
}

// testSampleLayerOverflow: more sampled edges than capacity; the true count
// is written and the edges that fit match the reference.
func testSampleLayerOverflow(e *env) {
	const live, capDst = 150, 150
	csr, g, dst, key, r := e.sampleCase(live, capDst)
	ref := refLayer(csr, dst[:live], 10, key)
	capEdges := ref.total / 2
	blk := e.sampleBlock(g, dst, e.count(live, capDst), 10, r, capEdges, capDst+10)
	if got := e.readCount(blk.NumEdges); got != ref.total {
		e.t.Errorf("overflowed NumEdges: got %d, want the true count %d (capacity %d)", got, ref.total, capEdges)
	}
	checkEqual(e.t, "overflowed Nbrs (within capacity)", e.readI32(blk.Nbrs, capEdges), ref.nbrs[:capEdges], 0)
}

// refRelabel relabels with package sample's reference.
func refRelabel(numNodes int64, dst, nbrs []int32, capSrc int) (src, local []int32, nSrc int) {
	src, local = make([]int32, capSrc), make([]int32, len(nbrs))
	nSrc = sample.NewRelabeler(numNodes).Relabel(dst, nbrs, src, local)
	return src[:min(nSrc, capSrc)], local, nSrc
}

// relabelCase is a relabel case of one fanout: relabelLive of
// relabelCapDst destinations dst on a random graph, their sampled edges
// ref, and sample, which samples them into a fresh block with room for
// every edge and source (capSrc).
type relabelCase struct {
	csr    *graph.CSR
	g      backend.Graph
	dst    []int32
	key    rng.Key
	ref    sampled
	capSrc int
	sample func() *backend.Block
}

const relabelLive, relabelCapDst = 120, 130

func (e *env) relabelCase(fanout int) relabelCase {
	csr, g, dst, key, r := e.sampleCase(relabelLive, relabelCapDst)
	ref := refLayer(csr, dst[:relabelLive], fanout, key)
	c := relabelCase{csr: csr, g: g, dst: dst, key: key, ref: ref, capSrc: relabelCapDst + ref.total + 5}
	c.sample = func() *backend.Block {
		return e.sampleBlock(g, dst, e.count(relabelLive, relabelCapDst), fanout, r, ref.total+5, c.capSrc)
	}
	return c
}

// checkRelabel relabels blk, sampled for the destinations dst of g (a graph
// on numNodes vertices) with the reference neighbours nbrs, and checks
// NumSrc, SrcIDs and Indices against refRelabel with capSrc sources.
func (e *env) checkRelabel(name string, g backend.Graph, blk *backend.Block, numNodes int64, dst, nbrs []int32, capSrc int) {
	e.t.Helper()
	e.be.Relabel(g, blk)
	src, local, nSrc := refRelabel(numNodes, dst, nbrs, capSrc)
	if got := e.readCount(blk.NumSrc); got != nSrc {
		e.t.Errorf("%s: NumSrc %d, want %d", name, got, nSrc)
	}
	checkEqual(e.t, name+" SrcIDs", e.readI32(blk.SrcIDs, nSrc), src, 0)
	checkEqual(e.t, name+" Indices", e.readI32(blk.Indices, len(nbrs)), local, 0)
}

func testRelabel(e *env) {
	for _, fanout := range []int{-1, 3, 10} {
		name := fmt.Sprintf("Relabel fanout=%d", fanout)
		const live, capDst = relabelLive, relabelCapDst
		c := e.relabelCase(fanout)
		csr, g, dst, key, ref := c.csr, c.g, c.dst, c.key, c.ref
		e.checkRelabel(name, g, c.sample(), csr.NumNodes, dst[:live], ref.nbrs, capDst+ref.total+5)
		// A second relabel of a fresh sample on the same graph (state reuse).
		r2 := e.rand(key.Seed+1, key.Stream, int32(key.Epoch), int32(key.Step))
		key.Seed++
		ref2 := refLayer(csr, dst[:live], fanout, key)
		blk2 := e.sampleBlock(g, dst, e.count(live, capDst), fanout, r2, ref2.total+5, capDst+ref2.total+5)
		e.checkRelabel(name+" (second)", g, blk2, csr.NumNodes, dst[:live], ref2.nbrs, capDst+ref2.total+5)
	}
}

// testRelabelOverflow: more sources than capacity; the true count is
// written and the source ids that fit match. (Local ids of edges are
// unspecified after an overflow: the driver discards the batch.)
func testRelabelOverflow(e *env) {
	const live, capDst = 100, 100
	csr, g, dst, key, r := e.sampleCase(live, capDst)
	ref := refLayer(csr, dst[:live], 5, key)
	_, _, nSrc := refRelabel(csr.NumNodes, dst[:live], ref.nbrs, 1)
	capSrc := live + (nSrc-live)/2
	if capSrc >= nSrc {
		e.t.Fatalf("test graph too small: %d sources", nSrc)
	}
	blk := e.sampleBlock(g, dst, e.count(live, capDst), 5, r, ref.total, capSrc)
	e.be.Relabel(g, blk)
	src, _, _ := refRelabel(csr.NumNodes, dst[:live], ref.nbrs, capSrc)
	if got := e.readCount(blk.NumSrc); got != nSrc {
		e.t.Errorf("overflowed NumSrc: got %d, want the true count %d (capacity %d)", got, nSrc, capSrc)
	}
	checkEqual(e.t, "overflowed SrcIDs (within capacity)", e.readI32(blk.SrcIDs, capSrc), src, 0)
}
