package backendtest

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
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
	var own [2][]int32
	var replica []int32
	at, index, kind := make([]int32, n), make([]int32, n), make([]uint8, n)
	for v := range n {
		p := e.rnd.IntN(2)
		switch {
		case p == 0 && e.rnd.IntN(3) == 0:
			at[v], index[v], kind[v] = 2, int32(len(replica)), backend.ListReplica
			replica = append(replica, int32(v))
		case p == 0:
			at[v], index[v], kind[v] = 0, int32(len(own[0])), backend.ListLocal
			own[0] = append(own[0], int32(v))
		default:
			at[v], index[v], kind[v] = 1, int32(len(own[1])), backend.ListRemote
			own[1] = append(own[1], int32(v))
		}
	}
	var lists []backend.Lists
	for _, ids := range [][]int32{own[0], own[1], replica} {
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

func readsOf(c *backend.ReadCounts, kind uint8) *int64 {
	switch kind {
	case backend.ListLocal:
		return &c.Local
	case backend.ListReplica:
		return &c.Replica
	}
	return &c.Remote
}
