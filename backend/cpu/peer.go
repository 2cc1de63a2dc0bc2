package cpu

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// cpuLists are neighbour lists: list i is indices[off[i] : off[i]+deg[i]].
// UploadLists copies them into a buffer of this backend (buf, counted in
// InUseBytes); HostLists's are slices of the CSR itself (buf nil).
type cpuLists struct {
	indices []int32
	off     []int64 // [lists]
	deg     []int32 // [lists]
	buf     backend.Buffer
	freed   bool
}

func (l *cpuLists) Lists() int { return len(l.deg) }

// list is list i.
func (l *cpuLists) list(i int32) []int32 { return l.indices[l.off[i] : l.off[i]+int64(l.deg[i])] }

// listsOf checks ids against csr and returns each list's offset in csr's
// indices and its degree.
func listsOf(op string, csr *graph.CSR, ids []int32) (off []int64, deg []int32, total int64, err error) {
	if csr == nil {
		return nil, nil, 0, fmt.Errorf("cpu: %s: nil graph", op)
	}
	if err := csr.Narrow(); err != nil {
		return nil, nil, 0, fmt.Errorf("cpu: %s: %w", op, err)
	}
	off, deg = make([]int64, len(ids)), make([]int32, len(ids))
	for i, v := range ids {
		if v < 0 || int64(v) >= csr.NumNodes {
			return nil, nil, 0, fmt.Errorf("cpu: %s: ids[%d] = %d outside the graph of %d vertices", op, i, v, csr.NumNodes)
		}
		off[i], deg[i] = csr.Indptr[v], int32(csr.Degree(int64(v)))
		total += int64(deg[i])
	}
	return off, deg, total, nil
}

// UploadLists copies the neighbour lists of ids into a buffer of this
// backend (see backend.PeerGraphs).
func (b *Backend) UploadLists(csr *graph.CSR, ids []int32) (backend.Lists, error) {
	off, deg, total, err := listsOf("UploadLists", csr, ids)
	if err != nil {
		return nil, err
	}
	host := make([]int32, 0, total)
	for i, v := range ids {
		off[i] = int64(len(host))
		host = append(host, csr.Neighbors32(int64(v))...)
	}
	buf, err := b.Upload(host)
	if err != nil {
		return nil, fmt.Errorf("cpu: UploadLists: %w", err)
	}
	return &cpuLists{indices: host, off: off, deg: deg, buf: buf}, nil
}

// HostLists are the neighbour lists of ids where csr holds them: on the
// CPU host memory is the backend's, so nothing is copied or counted.
func (b *Backend) HostLists(csr *graph.CSR, ids []int32) (backend.Lists, error) {
	off, deg, _, err := listsOf("HostLists", csr, ids)
	if err != nil {
		return nil, err
	}
	return &cpuLists{indices: csr.Indices, off: off, deg: deg}, nil
}

// FreeLists releases what UploadLists copied; either kind of lists is
// unusable afterwards.
func (b *Backend) FreeLists(l backend.Lists) {
	c, ok := l.(*cpuLists)
	if !ok || c == nil || c.freed {
		return
	}
	if c.buf != nil {
		b.Free(c.buf)
	}
	c.buf, c.indices, c.freed = nil, nil, true
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
		if !ok || c == nil || c.freed {
			return nil, fmt.Errorf("cpu: PeerGraph: lists %d (%T) were not made by a cpu backend, or were freed", i, l)
		}
		ls[i] = c
	}
	csr := &graph.CSR{NumNodes: numNodes, Indptr: make([]int64, numNodes+1)}
	for v := range numNodes {
		a, i := at[v], index[v]
		if a < 0 || int(a) >= len(ls) || i < 0 || int(i) >= ls[a].Lists() || kind[v] >= backend.ListKinds {
			return nil, fmt.Errorf("cpu: PeerGraph: vertex %d points to list %d of lists %d (kind %d), which do not exist", v, i, a, kind[v])
		}
		csr.Indptr[v+1] = csr.Indptr[v] + int64(ls[a].deg[i])
	}
	csr.Indices = make([]int32, 0, csr.Indptr[numNodes])
	for v := range numNodes {
		csr.Indices = append(csr.Indices, ls[at[v]].list(index[v])...)
	}
	return &cpuGraph{csr: csr, kind: append([]uint8(nil), kind...), reads: new([backend.ListKinds]int64)}, nil
}

// Repoint copies list i of lists into vertex ids[i]'s row of g's gathered
// CSR (which MaskGraph's views share) and sets its kind (see
// backend.PeerGraphs): a list of another length is an error, a list of
// other neighbours gives other samples, as a wrong pointer would.
func (b *Backend) Repoint(g backend.Graph, lists backend.Lists, ids []int32, kind uint8) error {
	cg, ok := g.(*cpuGraph)
	if !ok || cg == nil || cg.root().kind == nil {
		return fmt.Errorf("cpu: Repoint: not a PeerGraph of a cpu backend")
	}
	cg = cg.root()
	l, ok := lists.(*cpuLists)
	switch {
	case !ok || l == nil || l.freed:
		return fmt.Errorf("cpu: Repoint: lists (%T) were not made by a cpu backend, or were freed", lists)
	case l.Lists() != len(ids):
		return fmt.Errorf("cpu: Repoint: %d lists for %d vertices", l.Lists(), len(ids))
	case kind >= backend.ListKinds:
		return fmt.Errorf("cpu: Repoint: kind %d does not exist", kind)
	}
	for i, v := range ids {
		if v < 0 || int64(v) >= cg.csr.NumNodes || cg.csr.Degree(int64(v)) != int64(l.deg[i]) {
			return fmt.Errorf("cpu: Repoint: vertex %d of a graph of %d vertices cannot take list %d of %d neighbours", v, cg.csr.NumNodes, i, l.deg[i])
		}
	}
	for i, v := range ids {
		copy(cg.csr.Indices[cg.csr.Indptr[v]:cg.csr.Indptr[v+1]], l.list(int32(i)))
		cg.kind[v] = kind
	}
	return nil
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
	return backend.CountsOf(*cg.reads), nil
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
