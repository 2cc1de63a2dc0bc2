package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// cudaErrorPeerAccessAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED.
const cudaErrorPeerAccessAlreadyEnabled = 704

// devLists are neighbour lists in one device's memory (UploadLists) or in
// host memory mapped into its address space (HostLists): list i is
// indices[off[i] : off[i]+deg[i]].
type devLists struct {
	owner   *Backend
	indices *buffer // I32
	off     []int64
	deg     []int32
}

func (l *devLists) Lists() int { return len(l.deg) }

// UploadLists copies the neighbour lists of ids to this device (see
// backend.PeerGraphs).
func (b *Backend) UploadLists(csr *graph.CSR, ids []int32) (backend.Lists, error) {
	l, host, err := b.gatherLists("UploadLists", csr, ids)
	if err != nil {
		return nil, err
	}
	return l.put("UploadLists", host, b.Upload)
}

// put makes data, the lists' neighbours, readable by the kernels through
// upload (Upload or UploadHost) and returns the lists.
func (l *devLists) put(op string, data []int32, upload func(any) (backend.Buffer, error)) (backend.Lists, error) {
	x, err := upload(data)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: %d lists, %d MiB: %w", op, l.Lists(), len(data)*4>>20, err)
	}
	l.indices = x.(*buffer)
	return l, nil
}

// gatherLists checks ids against csr and lays their lists out one after
// another: the lists' offsets and degrees, and the neighbours in host
// memory.
func (b *Backend) gatherLists(op string, csr *graph.CSR, ids []int32) (*devLists, []int32, error) {
	if csr == nil {
		return nil, nil, fmt.Errorf("cuda: %s: nil graph", op)
	}
	if err := csr.Narrow(); err != nil {
		return nil, nil, fmt.Errorf("cuda: %s: %w", op, err)
	}
	l := &devLists{owner: b, off: make([]int64, len(ids)), deg: make([]int32, len(ids))}
	var total int64
	for i, v := range ids {
		if v < 0 || int64(v) >= csr.NumNodes {
			return nil, nil, fmt.Errorf("cuda: %s: ids[%d] = %d outside the graph of %d vertices", op, i, v, csr.NumNodes)
		}
		l.off[i], l.deg[i] = total, int32(csr.Degree(int64(v)))
		total += int64(l.deg[i])
	}
	host := make([]int32, 0, total)
	for _, v := range ids {
		host = append(host, csr.Neighbors32(int64(v))...)
	}
	return l, host, nil
}

// PeerGraph builds the pointer table of a graph whose lists live in this
// device's memory and its peers' (see backend.PeerGraphs): every vertex's
// list address and degree, read by the sampling kernels, the kind of each
// list, and Relabel's table. Peer access to each other device is enabled
// once; a device that cannot read another's memory is an error.
func (b *Backend) PeerGraph(numNodes int64, lists []backend.Lists, at, index []int32, kind []uint8) (backend.Graph, error) {
	if int64(len(at)) != numNodes || int64(len(index)) != numNodes || int64(len(kind)) != numNodes {
		return nil, fmt.Errorf("cuda: PeerGraph: tables of %d, %d and %d entries for %d vertices", len(at), len(index), len(kind), numNodes)
	}
	ls := make([]*devLists, len(lists))
	for i, l := range lists {
		d, ok := l.(*devLists)
		if !ok || d == nil || d.Lists() > 0 && d.indices == nil {
			return nil, fmt.Errorf("cuda: PeerGraph: lists %d (%T) were not made by a cuda backend, or were freed", i, l)
		}
		if d.owner != b {
			if err := b.enablePeer(d.owner); err != nil {
				return nil, err
			}
		}
		ls[i] = d
	}
	addr := make([]int64, numNodes)
	deg := make([]int32, numNodes)
	var edges int64
	for v := range numNodes {
		a, i := at[v], index[v]
		if a < 0 || int(a) >= len(ls) || i < 0 || int(i) >= ls[a].Lists() || kind[v] >= backend.ListKinds {
			return nil, fmt.Errorf("cuda: PeerGraph: vertex %d points to list %d of lists %d (kind %d), which do not exist", v, i, a, kind[v])
		}
		l := ls[a]
		addr[v] = int64(l.indices.ptr) + 4*l.off[i]
		deg[v] = l.deg[i]
		edges += int64(deg[v])
	}
	g := &devGraph{owner: b, numNodes: numNodes, numEdges: edges}
	ok := false
	defer func() {
		if !ok {
			b.FreeGraph(g)
		}
	}()
	up := func(dst **buffer, data any) error {
		x, err := b.Upload(data)
		if err == nil {
			*dst = x.(*buffer)
		}
		return err
	}
	for _, u := range []struct {
		dst  **buffer
		data any
	}{{&g.rowAddr, addr}, {&g.rowDeg, deg}, {&g.kind, append([]uint8(nil), kind...)}, {&g.reads, make([]int64, backend.ListKinds)}} {
		if err := up(u.dst, u.data); err != nil {
			return nil, fmt.Errorf("cuda: PeerGraph: %w", err)
		}
	}
	if err := b.relabelTable(g); err != nil {
		return nil, fmt.Errorf("cuda: PeerGraph: %w", err)
	}
	ok = true
	return g, nil
}

// relabelTable allocates Relabel's per-vertex table for g.
func (b *Backend) relabelTable(g *devGraph) error {
	c := b.beginAlways("relabel table")
	defer c.end()
	var err error
	if g.relmap, err = c.alloc(backend.I64, int(g.numNodes)); err == nil && g.numNodes > 0 {
		c.memset(g.relmap.ptr, math.MaxUint32, g.numNodes*8)
	}
	if err == nil {
		if g.relState, err = c.alloc(backend.I32, 2); err == nil {
			c.memset(g.relState.ptr, 0, 8)
		}
	}
	return err
}

// enablePeer lets this device's kernels read peer's memory (nothing to do
// for another backend on the same device).
func (b *Backend) enablePeer(peer *Backend) error {
	if peer.dev.ordinal == b.dev.ordinal {
		return nil
	}
	c := b.beginAlways("PeerGraph")
	defer c.end()
	d := b.drv
	var can int32
	if err := d.call("cuDeviceCanAccessPeer", d.cuDeviceCanAccessPeer, uintptr(unsafe.Pointer(&can)), uintptr(b.dev.handle), uintptr(peer.dev.handle)); err != nil {
		return err
	}
	if can == 0 {
		return fmt.Errorf("cuda: device %d cannot read device %d's memory (no peer access): train with the whole graph on each device", b.dev.ordinal, peer.dev.ordinal)
	}
	err := d.call("cuCtxEnablePeerAccess", d.cuCtxEnablePeerAccess, peer.ctx, 0)
	if e, isErr := err.(*Error); isErr && e.Code == cudaErrorPeerAccessAlreadyEnabled {
		return nil
	}
	return err
}

// GraphReads are the list reads SampleLayer has counted on a PeerGraph.
func (b *Backend) GraphReads(g backend.Graph) (backend.ReadCounts, error) {
	dg, ok := g.(*devGraph)
	if !ok || dg == nil || dg.reads == nil {
		return backend.ReadCounts{}, fmt.Errorf("cuda: GraphReads: not a PeerGraph of this backend")
	}
	var r [backend.ListKinds]int64
	b.Read(r[:], dg.reads, 0)
	if err := b.Sync(); err != nil {
		return backend.ReadCounts{}, err
	}
	return backend.CountsOf(r), nil
}
