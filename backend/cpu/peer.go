package cpu

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// cpuLists are neighbour lists copied into this backend's memory.
type cpuLists struct {
	indptr  []int64 // [lists+1]
	indices []int32
}

func (l *cpuLists) Lists() int { return len(l.indptr) - 1 }

// UploadLists copies the neighbour lists of ids (see backend.PeerGraphs).
func (b *Backend) UploadLists(csr *graph.CSR, ids []int32) (backend.Lists, error) {
	if csr == nil {
		return nil, fmt.Errorf("cpu: UploadLists: nil graph")
	}
	if err := csr.Narrow(); err != nil {
		return nil, fmt.Errorf("cpu: UploadLists: %w", err)
	}
	l := &cpuLists{indptr: make([]int64, len(ids)+1)}
	for i, v := range ids {
		if v < 0 || int64(v) >= csr.NumNodes {
			return nil, fmt.Errorf("cpu: UploadLists: ids[%d] = %d outside the graph of %d vertices", i, v, csr.NumNodes)
		}
		l.indptr[i+1] = l.indptr[i] + csr.Degree(int64(v))
	}
	l.indices = make([]int32, 0, l.indptr[len(ids)])
	for _, v := range ids {
		l.indices = append(l.indices, csr.Neighbors32(int64(v))...)
	}
	return l, nil
}

// PeerGraph follows the table (at, index) to every vertex's list. On the
// CPU every device's memory is the host's, so the lists are gathered, in
// vertex order, into one CSR that the sampler reads; the table is what
// decides which list a vertex gets, so a wrong entry gives other samples.
func (b *Backend) PeerGraph(numNodes int64, lists []backend.Lists, at, index []int32, kind []uint8) (backend.Graph, error) {
	if int64(len(at)) != numNodes || int64(len(index)) != numNodes || int64(len(kind)) != numNodes {
		return nil, fmt.Errorf("cpu: PeerGraph: tables of %d, %d and %d entries for %d vertices", len(at), len(index), len(kind), numNodes)
	}
	ls := make([]*cpuLists, len(lists))
	for i, l := range lists {
		c, ok := l.(*cpuLists)
		if !ok || c == nil {
			return nil, fmt.Errorf("cpu: PeerGraph: lists %d (%T) were not made by a cpu backend", i, l)
		}
		ls[i] = c
	}
	csr := &graph.CSR{NumNodes: numNodes, Indptr: make([]int64, numNodes+1)}
	for v := range numNodes {
		a, i := at[v], index[v]
		if a < 0 || int(a) >= len(ls) || i < 0 || int(i) >= ls[a].Lists() || kind[v] > backend.ListRemote {
			return nil, fmt.Errorf("cpu: PeerGraph: vertex %d points to list %d of lists %d (kind %d), which do not exist", v, i, a, kind[v])
		}
		csr.Indptr[v+1] = csr.Indptr[v] + ls[a].indptr[i+1] - ls[a].indptr[i]
	}
	csr.Indices = make([]int32, 0, csr.Indptr[numNodes])
	for v := range numNodes {
		l := ls[at[v]]
		csr.Indices = append(csr.Indices, l.indices[l.indptr[index[v]]:l.indptr[index[v]+1]]...)
	}
	return &cpuGraph{csr: csr, kind: append([]uint8(nil), kind...), reads: new([3]int64)}, nil
}

// GraphReads are the list reads counted by SampleLayer on a PeerGraph.
func (b *Backend) GraphReads(g backend.Graph) (backend.ReadCounts, error) {
	c := b.begin("GraphReads")
	defer c.end()
	cg := c.graph("g", g)
	if !c.ok {
		return backend.ReadCounts{}, b.err
	}
	cg = cg.root()
	if cg.reads == nil {
		return backend.ReadCounts{}, fmt.Errorf("cpu: GraphReads: not a PeerGraph")
	}
	return backend.ReadCounts{Local: cg.reads[0], Replica: cg.reads[1], Remote: cg.reads[2]}, nil
}

// countReads adds the live destinations' list reads to a PeerGraph's
// counts (not those a mask skips: they read nothing).
func (cg *cpuGraph) countReads(dst, skip []int32) {
	r := cg.root()
	if r.kind == nil {
		return
	}
	for _, v := range dst {
		if skip == nil || skip[v] < 0 {
			r.reads[r.kind[v]]++
		}
	}
}
