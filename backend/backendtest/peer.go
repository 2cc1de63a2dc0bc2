package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// testPeerGraph: a graph whose lists are spread over three uploads (two
// "devices'" own lists and a replica set) and found through the pointer
// table samples and relabels exactly as the whole graph, for every fanout,
// and counts one read per live destination under the kind its table entry
// names (a masked destination reads nothing).
func testPeerGraph(e *env) {
	pg := e.peerGraphs()
	csr, _, dst, key, r := e.sampleCase(150, 160)
	n := int(csr.NumNodes)
	g, kind := e.spreadGraph(pg, csr)
	var want backend.ReadCounts
	const live, capDst = 150, 160
	for _, fanout := range []int{-1, 3, 10, 40} {
		name := fmt.Sprintf("PeerGraph fanout=%d", fanout)
		ref := refLayer(csr, dst[:live], fanout, key)
		blk := e.sampleBlock(g, dst, e.count(live, capDst), fanout, r, ref.total+11, capDst+ref.total+5)
		checkEqual(e.t, name+" Indptr", e.readI32(blk.Indptr, live+1), ref.indptr, 0)
		checkEqual(e.t, name+" Nbrs", e.readI32(blk.Nbrs, ref.total), ref.nbrs, 0)
		e.checkRelabel(name, g, blk, csr.NumNodes, dst[:live], ref.nbrs, capDst+ref.total+5)
		for _, v := range dst[:live] {
			*readsOf(&want, kind[v])++
		}
	}
	// Masked: vertices 0 mod 3 are skipped and read nothing.
	skip := make([]int32, n)
	for v := range skip {
		skip[v] = -1
		if v%3 == 0 {
			skip[v] = 0
		}
	}
	view, err := e.hot().MaskGraph(g, e.upload(skip))
	if err != nil {
		e.t.Fatalf("MaskGraph: %v", err)
	}
	e.sampleBlock(view, dst, e.count(live, capDst), 5, r, live*5, capDst+live*5)
	for _, v := range dst[:live] {
		if v%3 != 0 {
			*readsOf(&want, kind[v])++
		}
	}
	e.sync()
	got, err := pg.GraphReads(g)
	if err != nil {
		e.t.Fatalf("GraphReads: %v", err)
	}
	if got != want {
		e.t.Errorf("GraphReads %+v, want %+v", got, want)
	}
}

// spreadGraph uploads csr's lists spread over three uploads (randomPlacement)
// and returns the PeerGraph that finds them, with each vertex's kind.
func (e *env) spreadGraph(pg backend.PeerGraphs, csr *graph.CSR) (backend.Graph, []uint8) {
	at, index, kind, sets := e.randomPlacement(int(csr.NumNodes), 0, [3]uint8{backend.ListLocal, backend.ListRemote, backend.ListReplica})
	var lists []backend.Lists
	for _, ids := range sets {
		l, err := pg.UploadLists(csr, ids)
		if err != nil {
			e.t.Fatalf("UploadLists: %v", err)
		}
		if l.Lists() != len(ids) {
			e.t.Fatalf("UploadLists: %d lists of %d", l.Lists(), len(ids))
		}
		lists = append(lists, l)
	}
	g, err := pg.PeerGraph(csr.NumNodes, lists, at, index, kind)
	if err != nil {
		e.t.Fatalf("PeerGraph: %v", err)
	}
	if g.NumNodes() != csr.NumNodes || g.NumEdges() != csr.NumEdges() {
		e.t.Fatalf("PeerGraph: %d vertices, %d edges; want %d, %d", g.NumNodes(), g.NumEdges(), csr.NumNodes, csr.NumEdges())
	}
	return g, kind
}

// randomPlacement spreads n vertices (or rows) over three uploads, two
// "devices'" own (at 0 and 1, each vertex on either at even odds) and a
// replica set (at 2: a third of those drawn for device replicaOf), and
// returns the table entries that find them (kind[v] is kinds[at[v]]) and
// the three sets in upload order.
func (e *env) randomPlacement(n, replicaOf int, kinds [3]uint8) (at, index []int32, kind []uint8, sets [3][]int32) {
	at, index, kind = make([]int32, n), make([]int32, n), make([]uint8, n)
	for v := range n {
		p := e.rnd.IntN(2)
		if p == replicaOf && e.rnd.IntN(3) == 0 {
			p = 2
		}
		at[v], index[v], kind[v] = int32(p), int32(len(sets[p])), kinds[p]
		sets[p] = append(sets[p], int32(v))
	}
	return at, index, kind, sets
}

func readsOf(c *backend.ReadCounts, kind uint8) *int64 {
	switch kind {
	case backend.ListLocal:
		return &c.Local
	case backend.ListReplica:
		return &c.Replica
	}
	return &c.Remote
}
