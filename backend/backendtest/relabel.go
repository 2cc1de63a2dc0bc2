package backendtest

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// The relabelling of one vertex space over several blocks (RelabelStart,
// RelabelAdd) is checked against package sample's relabeler over the
// blocks' edges one after the other: relabelling relation by relation in
// one space is relabelling their edges concatenated.

// edgeless uploads a graph of n vertices and no edges: a vertex space.
func (e *env) edgeless(n int) backend.Graph {
	return e.uploadGraph(&graph.CSR{NumNodes: int64(n), Indptr: make([]int64, n+1)})
}

// distinctIDs returns n distinct ids below below, then past ids of 1<<30 up
// to capacity (which no op may read).
func (e *env) distinctIDs(n, capacity, below int) []int32 {
	ids := make([]int32, capacity)
	for i, p := range e.rnd.Perm(below)[:n] {
		ids[i] = int32(p)
	}
	for i := n; i < capacity; i++ {
		ids[i] = 1 << 30
	}
	return ids
}

// randomIDs returns n ids below below, repeats likely.
func (e *env) randomIDs(n, below int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(e.rnd.IntN(below))
	}
	return ids
}

// edgeBlock is a block of nbrs alone (live edges, capacity capEdges): all
// that RelabelAdd reads, with poisoned Indices.
func (e *env) edgeBlock(nbrs []int32, capEdges int) *backend.Block {
	padded := make([]int32, capEdges)
	for i := range padded {
		padded[i] = 1 << 30
	}
	copy(padded, nbrs)
	return &backend.Block{
		NumEdges: e.count(len(nbrs), capEdges),
		Nbrs:     e.upload(padded),
		Indices:  e.poisonI32(capEdges),
	}
}

// checkSpace compares a space's count, source ids and the blocks' local ids
// with the reference relabelling of dst and the blocks' edges nbrs, one
// after the other.
func (e *env) checkSpace(name string, numNodes int, dst []int32, nbrs [][]int32, srcIDs backend.Buffer, nSrc backend.Count, blocks []*backend.Block) {
	e.t.Helper()
	src, local, n := refRelabel(int64(numNodes), dst, slices.Concat(nbrs...), nSrc.Cap)
	if got := e.readCount(nSrc); got != n {
		e.t.Errorf("%s: nSrc %d, want %d", name, got, n)
	}
	checkEqual(e.t, name+" srcIDs", e.readI32(srcIDs, len(src)), src, 0)
	for i, blk := range blocks {
		if len(nbrs[i]) > 0 && n <= nSrc.Cap {
			checkEqual(e.t, fmt.Sprintf("%s block %d Indices", name, i), e.readI32(blk.Indices, len(nbrs[i])), local[:len(nbrs[i])], 0)
		}
		local = local[len(nbrs[i]):]
	}
}

// testRelabelStartAdd: RelabelStart over a block's destinations then one
// RelabelAdd of the block gives what Relabel gives, whether the space's
// ids and count are the block's own or buffers of their own (the block's
// SrcIDs and NumSrc are then left as they were).
func testRelabelStartAdd(e *env) {
	for _, fanout := range []int{-1, 3, 10} {
		name := fmt.Sprintf("RelabelStart+RelabelAdd fanout=%d", fanout)
		c := e.relabelCase(fanout)
		csr, g, dst, ref, live, capSrc := c.csr, c.g, c.dst, c.ref, relabelLive, c.capSrc
		one, two, three := c.sample(), c.sample(), c.sample()
		e.be.Relabel(g, one)
		e.be.RelabelStart(g, e.upload(dst), two.NumDst, two.SrcIDs, two.NumSrc)
		e.be.RelabelAdd(g, two, two.SrcIDs, two.NumSrc)
		srcIDs, nSrc := e.poisonI32(capSrc), e.count(-3, capSrc)
		e.be.RelabelStart(g, e.upload(dst), three.NumDst, srcIDs, nSrc)
		e.be.RelabelAdd(g, three, srcIDs, nSrc)

		n := e.readCount(one.NumSrc)
		wantSrc, wantLocal := e.readI32(one.SrcIDs, n), e.readI32(one.Indices, ref.total)
		e.checkSpace(name+" (Relabel)", int(csr.NumNodes), dst[:live], [][]int32{ref.nbrs}, one.SrcIDs, one.NumSrc, []*backend.Block{one})
		for _, sp := range []struct {
			what string
			src  backend.Buffer
			n    backend.Count
			blk  *backend.Block
		}{{"in the block", two.SrcIDs, two.NumSrc, two}, {"apart", srcIDs, nSrc, three}} {
			if got := e.readCount(sp.n); got != n {
				e.t.Errorf("%s %s: nSrc %d, Relabel's NumSrc %d", name, sp.what, got, n)
			}
			checkEqual(e.t, name+" "+sp.what+": srcIDs = Relabel's", e.readI32(sp.src, n), wantSrc, 0)
			checkEqual(e.t, name+" "+sp.what+": Indices = Relabel's", e.readI32(sp.blk.Indices, ref.total), wantLocal, 0)
		}
		if got := e.readCount(three.NumSrc); got != -3 {
			e.t.Errorf("%s apart: the block's NumSrc became %d", name, got)
		}
		checkEqual(e.t, name+" apart: the block's SrcIDs past its destinations", e.readI32(three.SrcIDs, capSrc)[live:], slices.Repeat([]int32{-999}, capSrc-live), 0)
	}
}

// relation is one relation of testRelabelSpace: its destination type's
// vertex count, live destinations and their capacity, and the fanout.
type relation struct{ rows, live, capDst, fanout int }

// testRelabelSpace: a source type of three relations (the last with no
// live destinations) relabelled in one space: its destinations first, then
// each relation's sampled neighbours in order; twice on one space graph,
// the second space seeing nothing of the first.
func testRelabelSpace(e *env) {
	const ns, live, capDst = 400, 50, 60
	space := e.edgeless(ns)
	rels := []relation{{300, 80, 90, 5}, {200, 60, 64, -1}, {250, 0, 8, 3}}
	for round := range 2 {
		name := fmt.Sprintf("typed relabel round %d", round)
		dst := e.distinctIDs(live, capDst, ns)
		var blocks []*backend.Block
		var nbrs [][]int32
		capSrc := capDst
		for i, rel := range rels {
			csr := e.randomRelation(rel.rows, ns, 40)
			g := e.uploadGraph(csr)
			rdst := e.randomIDs(rel.capDst, rel.rows)
			key := rng.Key{Seed: uint64(17 + 3*round + i), Epoch: 1, Step: 5, Stream: 2}
			ref := refLayer(csr, rdst[:rel.live], rel.fanout, key)
			r := e.rand(key.Seed, key.Stream, int32(key.Epoch), int32(key.Step))
			blk := e.sampleBlock(g, rdst, e.count(rel.live, rel.capDst), rel.fanout, r, ref.total+3, rel.capDst+1)
			blocks, nbrs = append(blocks, blk), append(nbrs, ref.nbrs)
			capSrc += ref.total
		}
		srcIDs, nSrc := e.poisonI32(capSrc+7), e.count(-3, capSrc+7)
		e.be.RelabelStart(space, e.upload(dst), e.count(live, capDst), srcIDs, nSrc)
		for _, blk := range blocks {
			e.be.RelabelAdd(space, blk, srcIDs, nSrc)
		}
		e.checkSpace(name, ns, dst[:live], nbrs, srcIDs, nSrc, blocks)
		for i, blk := range blocks {
			if got := e.readCount(blk.NumSrc); got != -3 {
				e.t.Errorf("%s: block %d's NumSrc became %d", name, i, got)
			}
		}
	}
}

// testRelabelSpaceOverflow: more sources than the space's capacity (from
// its destinations on, or from its first block on): nSrc is the true count
// after every block, and the source ids that fit match. (Local ids are
// unspecified after an overflow, as Relabel's.)
func testRelabelSpaceOverflow(e *env) {
	const ns, live = 300, 40
	space := e.edgeless(ns)
	dst := e.distinctIDs(live, live, ns)
	nbrs := [][]int32{e.randomIDs(150, ns), e.randomIDs(100, ns)}
	_, _, total := refRelabel(ns, dst, slices.Concat(nbrs...), 0)
	for _, capSrc := range []int{live / 2, live + (total-live)/3} {
		name := fmt.Sprintf("typed relabel overflow (capacity %d of %d)", capSrc, total)
		srcIDs, nSrc := e.poisonI32(capSrc), e.count(-3, capSrc)
		blocks := []*backend.Block{e.edgeBlock(nbrs[0], 160), e.edgeBlock(nbrs[1], 100)}
		e.be.RelabelStart(space, e.upload(dst), e.count(live, live), srcIDs, nSrc)
		if got := e.readCount(nSrc); got != live {
			e.t.Errorf("%s: nSrc %d after RelabelStart, want %d", name, got, live)
		}
		for _, blk := range blocks {
			e.be.RelabelAdd(space, blk, srcIDs, nSrc)
		}
		e.checkSpace(name, ns, dst, nbrs, srcIDs, nSrc, blocks)
	}
}

// testRelabelSpaceCapture (backends implementing backend.Capturer): one
// captured RelabelStart and two RelabelAdd calls, replayed over other ids
// and live counts written into the same buffers (none, some, all up to
// capacity), relabel each time as the reference does.
func testRelabelSpaceCapture(e *env) {
	cp, ok := e.be.(backend.Capturer)
	if !ok {
		e.t.Skipf("%s does not implement backend.Capturer", e.be.Name())
	}
	const ns, capDst, capA, capB = 200, 30, 80, 50
	space := e.edgeless(ns)
	dstBuf, nDst := e.poisonI32(capDst), e.count(0, capDst)
	blocks := []*backend.Block{e.edgeBlock(nil, capA), e.edgeBlock(nil, capB)}
	srcIDs, nSrc := e.poisonI32(capDst+capA+capB), e.count(0, capDst+capA+capB)
	e.sync()
	rp := e.capture(cp, func() {
		e.be.RelabelStart(space, dstBuf, nDst, srcIDs, nSrc)
		for _, blk := range blocks {
			e.be.RelabelAdd(space, blk, srcIDs, nSrc)
		}
	})
	for round, sizes := range [][3]int{{capDst, capA, capB}, {7, 13, 0}, {0, 25, 40}} {
		dst := e.distinctIDs(sizes[0], capDst, ns)
		nbrs := [][]int32{e.randomIDs(sizes[1], ns), e.randomIDs(sizes[2], ns)}
		e.be.Write(dstBuf, 0, dst)
		e.be.Write(nDst.Buf, nDst.Off, []int32{int32(sizes[0])})
		for i, blk := range blocks {
			e.be.Write(blk.Nbrs, 0, nbrs[i])
			e.be.Write(blk.NumEdges.Buf, blk.NumEdges.Off, []int32{int32(len(nbrs[i]))})
		}
		rp.Launch()
		e.sync()
		e.checkSpace(fmt.Sprintf("typed relabel replay %d", round), ns, dst[:sizes[0]], nbrs, srcIDs, nSrc, blocks)
	}
}
