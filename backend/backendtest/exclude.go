package backendtest

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// excludeCase is a step's positives over a graph with sorted rows (as
// graph.CSR's are): live of bCap positives laid out as EdgeSeeds lays
// them out, and all, a vertex every entry of whose row is a positive.
type excludeCase struct {
	csr             *graph.CSR
	g               backend.Graph
	ends            []int32 // [2·bCap]
	live, bCap, all int
}

// excludeCase draws the positives: every entry of one row, then entries
// of random rows (a third stored reversed, some twice), and a pair that
// is no edge.
func (e *env) excludeCase(live, bCap int) excludeCase {
	csr := e.randomCSR(500, 120)
	for v := range csr.NumNodes {
		slices.Sort(csr.Indices[csr.Indptr[v]:csr.Indptr[v+1]])
	}
	c := excludeCase{csr: csr, g: e.uploadGraph(csr), live: live, bCap: bCap, all: 0}
	for csr.Degree(int64(c.all)) < 3 || csr.Degree(int64(c.all)) > int64(live/4) {
		c.all++
	}
	var src, dst []int32
	for _, w := range csr.Neighbors32(int64(c.all)) {
		src, dst = append(src, int32(c.all)), append(dst, w)
	}
	for len(src) < live-1 {
		x := int32(e.rnd.IntN(500))
		row := csr.Neighbors32(int64(x))
		if len(row) == 0 {
			continue
		}
		w := row[e.rnd.IntN(len(row))]
		if e.rnd.IntN(3) == 0 {
			x, w = w, x // stored reversed: only a reverse exclusion takes it out
		}
		src, dst = append(src, x), append(dst, w)
		if e.rnd.IntN(6) == 0 {
			src, dst = append(src, x), append(dst, w)
		}
	}
	src, dst = append(src[:live-1], 7), append(dst[:live-1], 7) // no self loops: no edge
	c.ends = make([]int32, 2*bCap)
	for i := range c.ends {
		c.ends[i] = 1 << 30 // past the live positives
	}
	copy(c.ends, src)
	copy(c.ends[live:], dst)
	return c
}

// ref is the exclusion package sample builds for the case, as one buffer.
func (c excludeCase) ref(reverse bool) []int64 {
	out := make([]int64, backend.ExclusionSize(c.bCap))
	ex := sample.Exclusion{Keys: out[:2*c.bCap], Buckets: out[2*c.bCap:]}
	sample.BuildExclusion(c.csr, c.ends[:c.live], c.ends[c.live:2*c.live], reverse, ex)
	return out
}

// build runs BuildExclusion on the backend into a poisoned buffer.
func (c excludeCase) build(e *env, reverse bool) backend.Buffer {
	excl := e.alloc(backend.I64, backend.ExclusionSize(c.bCap), 7)
	e.be.BuildExclusion(c.g, e.upload(c.ends), e.count(c.live, c.bCap), reverse, excl)
	return excl
}

// testBuildExclusion: the exclusion of positives with repeats, reversed
// pairs and a pair that is no edge equals package sample's bit for bit,
// keys and buckets, with and without reverse; and it is no empty one.
func testBuildExclusion(e *env) {
	c := e.excludeCase(60, 64)
	for _, reverse := range []bool{false, true} {
		name := fmt.Sprintf("BuildExclusion reverse=%v", reverse)
		want := c.ref(reverse)
		if want[0] < 0 || want[c.live] >= 0 && !reverse {
			e.t.Fatalf("%s: the case excludes no entry, or every pair", name)
		}
		checkEqual(e.t, name, readBack[int64](e, c.build(e, reverse), len(want)), want, 0)
	}
}

// dsts is the destinations of a sampled hop: every end of the positives,
// then random vertices, and 10 past the live ones (capDst in all).
func (c excludeCase) dsts(e *env, capDst int) []int32 {
	dst := append([]int32{int32(c.all)}, c.ends[:2*c.live]...)
	for len(dst) < capDst-10 {
		dst = append(dst, int32(e.rnd.IntN(int(c.csr.NumNodes))))
	}
	for len(dst) < capDst {
		dst = append(dst, 1<<30)
	}
	return dst
}

// excludeHop is a hop to sample through an exclusion: the case's live
// of bCap positives, capDst destinations (live of them: every end, then
// random vertices) and the key.
func (e *env) excludeHop(live, bCap, capDst int, key rng.Key) (c excludeCase, dst []int32, nDst int, _ rng.Key, r backend.Rand) {
	c = e.excludeCase(live, bCap)
	dst = c.dsts(e, capDst)
	return c, dst, capDst - 10, key, e.rand(key.Seed, key.Stream, int32(key.Epoch), int32(key.Step))
}

// refExcluding is the reference of a hop sampled without the excluded
// entries (package sample's LayerExcluding).
func refExcluding(csr *graph.CSR, dst []int32, fanout int, key rng.Key, skip []int32, excl []int64, bCap int) sampled {
	ex := &sample.Exclusion{Keys: excl[:2*bCap], Buckets: excl[2*bCap:]}
	indptr := make([]int32, len(dst)+1)
	total := sample.LayerExcluding(csr, dst, fanout, key, indptr, nil, 1, skip, ex)
	nbrs := make([]int32, total)
	sample.LayerExcluding(csr, dst, fanout, key, indptr, nbrs, 1, skip, ex)
	return sampled{indptr, nbrs, total}
}

// checkExcluding samples dst of g through excl into a block of capEdges
// edges and checks it against want (the edges that fit, the true count).
func (e *env) checkExcluding(name string, g backend.Graph, dst []int32, live, fanout int, r backend.Rand, c excludeCase, excl backend.Buffer, want sampled, capEdges int) {
	e.t.Helper()
	capDst := len(dst)
	blk := &backend.Block{
		NumDst: e.count(live, capDst), NumEdges: e.count(-3, capEdges), NumSrc: e.count(-3, capDst+10),
		Indptr: e.poisonI32(capDst + 1), Nbrs: e.poisonI32(capEdges), Indices: e.poisonI32(capEdges),
		SrcIDs: e.poisonI32(capDst + 10),
	}
	e.be.SampleExcluding(g, e.upload(dst), blk.NumDst, fanout, r, blk, e.count(c.live, c.bCap), excl)
	if got := e.readCount(blk.NumEdges); got != want.total {
		e.t.Errorf("%s: NumEdges %d, want %d", name, got, want.total)
	}
	checkEqual(e.t, name+" Indptr", e.readI32(blk.Indptr, live+1), want.indptr, 0)
	fit := min(want.total, capEdges)
	checkEqual(e.t, name+" Nbrs", e.readI32(blk.Nbrs, fit), want.nbrs[:fit], 0)
	checkEqual(e.t, name+" SrcIDs (destinations)", e.readI32(blk.SrcIDs, live), dst[:live], 0)
}

// testSampleExcluding: a hop whose destinations are every end of the
// positives (one of them a vertex all of whose neighbours are excluded)
// and other vertices samples exactly as package sample's LayerExcluding,
// with and without reverse, for every fill (fanout -1, 8, 16, 32 and
// above), and with an edge capacity it overflows; the exclusion does take
// neighbours out.
func testSampleExcluding(e *env) {
	c, dst, live, key, r := e.excludeHop(60, 64, 300, rng.Key{Seed: 0x5eed, Epoch: 1, Step: 12, Stream: 2})
	for _, reverse := range []bool{false, true} {
		ex := c.ref(reverse)
		excl := c.build(e, reverse)
		for _, fanout := range []int{-1, 0, 1, 5, 8, 12, 16, 20, 32, 45} {
			name := fmt.Sprintf("SampleExcluding reverse=%v fanout=%d", reverse, fanout)
			want := refExcluding(c.csr, dst[:live], fanout, key, nil, ex, c.bCap)
			plain := refLayer(c.csr, dst[:live], fanout, key)
			if fanout != 0 && (want.indptr[1] != 0 || slices.Equal(want.nbrs, plain.nbrs)) {
				e.t.Fatalf("%s: the case excludes nothing, or leaves vertex %d neighbours", name, c.all)
			}
			e.checkExcluding(name, c.g, dst, live, fanout, r, c, excl, want, want.total+7)
			if fanout == 5 || fanout == -1 {
				e.checkExcluding(name+" overflowed", c.g, dst, live, fanout, r, c, excl, want, want.total/2)
			}
		}
	}
}

// testSampleExcludingViews: through a MaskGraph view the skipped vertices
// get no neighbours and the others sample without their excluded
// entries; a PeerGraph's pointer table (where the backend has one)
// builds the same exclusion and samples the same.
func testSampleExcludingViews(e *env) {
	c, dst, live, key, r := e.excludeHop(40, 48, 200, rng.Key{Seed: 77, Epoch: 0, Step: 3, Stream: 1})
	ex := c.ref(true)
	skip := make([]int32, c.csr.NumNodes)
	for v := range skip {
		skip[v] = -1
		if v%5 == 2 {
			skip[v] = 0
		}
	}
	view, err := e.hot().MaskGraph(c.g, e.upload(skip))
	if err != nil {
		e.t.Fatalf("MaskGraph: %v", err)
	}
	excl := c.build(e, true)
	for _, fanout := range []int{-1, 6, 40} {
		want := refExcluding(c.csr, dst[:live], fanout, key, skip, ex, c.bCap)
		e.checkExcluding(fmt.Sprintf("SampleExcluding masked fanout=%d", fanout), view, dst, live, fanout, r, c, excl, want, want.total+3)
	}
	pg := e.peerGraphs()
	c.g, _ = e.spreadGraph(pg, c.csr)
	excl = c.build(e, true)
	checkEqual(e.t, "BuildExclusion over a PeerGraph", readBack[int64](e, excl, len(ex)), ex, 0)
	for _, fanout := range []int{-1, 6, 40} {
		want := refExcluding(c.csr, dst[:live], fanout, key, nil, ex, c.bCap)
		e.checkExcluding(fmt.Sprintf("SampleExcluding PeerGraph fanout=%d", fanout), c.g, dst, live, fanout, r, c, excl, want, want.total+3)
	}
}
