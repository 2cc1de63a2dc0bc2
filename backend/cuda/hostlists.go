package cuda

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// HostLists makes the neighbour lists of ids readable by the sampling
// kernels in host memory, over PCIe (see backend.PeerGraphs). When ids are
// every vertex in order, the lists are csr's own indices, registered in
// place by UploadHost (a memory-mapped dataset's too; pinned copy where the
// driver refuses), and their offsets are csr's indptr: a graph whose lists
// do not fit the GPU needs no second copy in host memory. Otherwise the
// rows are copied together first. Nothing counts in InUseBytes.
func (b *Backend) HostLists(csr *graph.CSR, ids []int32) (backend.Lists, error) {
	var (
		l    *devLists
		data []int32
	)
	if whole(csr, ids) {
		if err := csr.Narrow(); err != nil {
			return nil, fmt.Errorf("cuda: HostLists: %w", err)
		}
		n := csr.NumNodes
		l = &devLists{owner: b, off: csr.Indptr[:n], deg: make([]int32, n)}
		for v := range n {
			l.deg[v] = int32(csr.Indptr[v+1] - csr.Indptr[v])
		}
		data = csr.Indices
	} else {
		var err error
		if l, data, err = b.gatherLists("HostLists", csr, ids); err != nil {
			return nil, err
		}
	}
	return l.put("HostLists", data, b.UploadHost)
}

// whole says whether ids are all of csr's vertices in order.
func whole(csr *graph.CSR, ids []int32) bool {
	if csr == nil || int64(len(ids)) != csr.NumNodes {
		return false
	}
	for i, v := range ids {
		if v != int32(i) {
			return false
		}
	}
	return true
}

// FreeLists releases lists made by UploadLists (device memory) or
// HostLists (unregistered, or the pinned copy freed).
func (b *Backend) FreeLists(l backend.Lists) {
	d, ok := l.(*devLists)
	if !ok || d == nil || d.owner != b || d.indices == nil {
		return
	}
	b.Free(d.indices)
	d.indices = nil
}

// Repoint rewrites g's pointer table so that vertex ids[i] reads list i
// of lists under kind (see backend.PeerGraphs): the degrees, addresses and
// kinds are read back, checked and changed on the host, and written again
// (13 bytes a vertex each way, once per run). A MaskGraph view of g shares
// the table.
func (b *Backend) Repoint(g backend.Graph, lists backend.Lists, ids []int32, kind uint8) error {
	dg, ok := g.(*devGraph)
	if !ok || dg == nil || dg.owner != b || dg.rowAddr == nil {
		return fmt.Errorf("cuda: Repoint: not a PeerGraph of this backend")
	}
	l, ok := lists.(*devLists)
	switch {
	case !ok || l == nil || l.indices == nil:
		return fmt.Errorf("cuda: Repoint: lists (%T) were not made by a cuda backend, or were freed", lists)
	case l.Lists() != len(ids):
		return fmt.Errorf("cuda: Repoint: %d lists for %d vertices", l.Lists(), len(ids))
	case kind >= backend.ListKinds:
		return fmt.Errorf("cuda: Repoint: kind %d does not exist", kind)
	case b.capturing:
		return fmt.Errorf("cuda: Repoint: cannot change a graph while capturing")
	}
	if l.owner != b {
		if err := b.enablePeer(l.owner); err != nil {
			return err
		}
	}
	n := dg.numNodes
	addr, deg, kinds := make([]int64, n), make([]int32, n), make([]uint8, n)
	b.Read(addr, dg.rowAddr, 0)
	b.Read(deg, dg.rowDeg, 0)
	b.Read(kinds, dg.kind, 0)
	if err := b.Sync(); err != nil {
		return fmt.Errorf("cuda: Repoint: %w", err)
	}
	for i, v := range ids {
		if v < 0 || int64(v) >= n || deg[v] != l.deg[i] {
			return fmt.Errorf("cuda: Repoint: vertex %d of a graph of %d vertices cannot take list %d of %d neighbours", v, n, i, l.deg[i])
		}
		addr[v] = int64(l.indices.ptr) + 4*l.off[i]
		kinds[v] = kind
	}
	b.Write(dg.rowAddr, 0, addr)
	b.Write(dg.kind, 0, kinds)
	if err := b.Sync(); err != nil {
		return fmt.Errorf("cuda: Repoint: %w", err)
	}
	return nil
}
