package hybrid

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/sample"
)

// TopologyMode says where the hybrid driver keeps the graph's neighbour
// lists.
type TopologyMode int

const (
	// TopologyAuto keeps the whole graph in GPU memory where it fits the
	// budget with the step (PlanTopology), else as TopologyHost.
	TopologyAuto TopologyMode = iota
	// TopologyHost samples through a pointer table over lists in host
	// memory, the highest-degree vertices' lists copied to the GPU under
	// the budget (ListShare of the room).
	TopologyHost
	// TopologyGPU keeps the whole graph (CSR) in GPU memory.
	TopologyGPU
)

// DefaultListShare is the share of the room left once the step is
// provisioned (budget - resident - margin) that the GPU's copies of
// neighbour lists take under host topology; the feature cache takes the
// rest. Half: a step reads a vertex's list once per hop where it is a
// destination and its feature row once where it is an input, both skewed
// to the same high-degree vertices and both read over PCIe otherwise, at
// 4 bytes a neighbour against 4 (or 2) bytes a feature value; without a
// measurement that favours one, neither tier gets the room first.
const DefaultListShare = 0.5

// Bytes a vertex that a graph takes in GPU memory whatever its lists: a
// PeerGraph's pointer table (8: the list's address, 4: its degree, 1: its
// kind) and Relabel's table (8), which a CSR has too.
const (
	pointerTableBytes = 8 + 4 + 1
	relabelBytes      = 8
)

// vertexTableBytes are the hybrid run's other per-vertex tables in GPU
// memory: labels (4), degrees (4) and the tiered store's slot table (4).
const vertexTableBytes = 4 + 4 + 4

// TopologyPlan is where the graph is, in bytes of GPU memory.
type TopologyPlan struct {
	Host     bool  // lists behind a pointer table, most in host memory; false: the whole CSR on the GPU
	Vertices int64 // the graph's
	Edges    int64 // directed, 4 bytes each in a list
	Bytes    int64 // on the GPU before any list: the CSR, or the pointer table; Relabel's table included
	GPULists int64 // vertices whose lists are in GPU memory (all without Host)
	GPUEdges int64 // their neighbours
}

// ListBytes are the bytes of every list.
func (t TopologyPlan) ListBytes() int64 { return 4 * t.Edges }

// GPUListBytes are the bytes of the lists copied to the GPU.
func (t TopologyPlan) GPUListBytes() int64 { return 4 * t.GPUEdges }

// wholeGraphBytes is a CSR of n vertices and e edges in GPU memory:
// indptr (int64), indices (int32) and Relabel's table.
func wholeGraphBytes(n, e int64) int64 { return 8*(n+1) + 4*e + relabelBytes*n }

// PlanTopology decides, before anything is in GPU memory, where the lists
// of a graph of n vertices and e edges go under budget (0: no limit) less
// margin. TopologyAuto keeps the whole graph (wholeGraphBytes) on the GPU
// when it fits with the per-vertex tables, the margin and step, an
// estimate of the step's envelope (which is known only once the trainer
// has provisioned it, on the graph it samples: StepEstimate), leaving the
// feature cache empty at worst; otherwise the lists go to host memory,
// and their share of the GPU is decided when the step is known (all of
// them when they fit). It is an error, naming --gpu-memory, when the
// budget cannot hold the pointer table and the per-vertex tables with
// every list and feature row in host memory.
func PlanTopology(mode TopologyMode, budget, margin, step, n, e int64) (TopologyPlan, error) {
	whole := TopologyPlan{Vertices: n, Edges: e, Bytes: wholeGraphBytes(n, e), GPULists: n, GPUEdges: e}
	host := TopologyPlan{Host: true, Vertices: n, Edges: e, Bytes: (pointerTableBytes + relabelBytes) * n}
	switch {
	case mode == TopologyGPU:
		return whole, nil
	case budget <= 0:
		if mode == TopologyHost {
			return host, nil
		}
		return whole, nil
	}
	tables := vertexTableBytes * n
	if least := host.Bytes + tables + margin; budget < least {
		return host, fmt.Errorf("--gpu-memory: the budget of %s does not hold the graph's pointer table and per-vertex tables (%s: %d bytes for each of %d vertices) and the %s margin, with every neighbour list and feature row in host memory: at least %s is needed",
			mib(budget), mib(host.Bytes+tables), pointerTableBytes+relabelBytes+vertexTableBytes, n, mib(margin), mib(least))
	}
	if mode == TopologyHost || whole.Bytes+tables+margin+step > budget {
		return host, nil
	}
	return whole, nil
}

// StepEstimate is what PlanTopology reserves for the step before it is
// provisioned: the feature rows (float32, dim wide) its bottom layer
// gathers at the conservative envelope (sample.Envelope for batch seeds:
// min(N, batch·Π(fanout+1)) sources), the largest part of a node step's
// plan; the model's workspace and the ids are left to the margin.
func StepEstimate(g *graph.CSR, batch int, fanouts []int, dim int) int64 {
	caps := sample.Envelope(g, batch, fanouts)
	if len(caps) == 0 {
		return 0
	}
	return int64(caps[0].Src) * int64(dim) * 4
}

// hostTopology is the graph of a run under TopologyHost: a PeerGraph over
// every vertex's list in host memory, read in place (HostLists over the
// CSR itself), whose highest-degree vertices are pointed at copies in GPU
// memory once the step is provisioned (place).
type hostTopology struct {
	be    backend.Backend
	pg    backend.PeerGraphs
	csr   *graph.CSR
	host  backend.Lists
	gpu   backend.Lists // nil until placed
	graph backend.Graph
}

// newHostTopology makes be's PeerGraph of csr with every list in host
// memory.
func newHostTopology(be backend.Backend, csr *graph.CSR) (*hostTopology, error) {
	pg := backend.PeerGraphsOf(be)
	if pg == nil {
		return nil, fmt.Errorf("hybrid: backend %s cannot sample from lists in host memory (no backend.PeerGraphs)", be.Name())
	}
	n := csr.NumNodes
	all, at, kind := make([]int32, n), make([]int32, n), make([]uint8, n)
	for v := range all {
		all[v], kind[v] = int32(v), backend.ListHost
	}
	t := &hostTopology{be: be, pg: pg, csr: csr}
	var err error
	if t.host, err = pg.HostLists(csr, all); err != nil {
		return nil, fmt.Errorf("hybrid: topology in host memory: %w", err)
	}
	if t.graph, err = pg.PeerGraph(n, []backend.Lists{t.host}, at, all, kind); err != nil {
		t.free()
		return nil, fmt.Errorf("hybrid: topology in host memory: %w", err)
	}
	return t, nil
}

// place copies the lists of the highest-degree vertices that fit in room
// bytes to GPU memory and points the graph at them, and returns how many
// vertices and neighbours moved.
func (t *hostTopology) place(room int64) (lists, edges int64, err error) {
	ids := graph.Replicated(t.csr, room)
	if len(ids) == 0 {
		return 0, 0, nil
	}
	for _, v := range ids {
		edges += t.csr.Degree(int64(v))
	}
	if t.gpu, err = t.pg.UploadLists(t.csr, ids); err != nil {
		return 0, 0, fmt.Errorf("hybrid: %d lists to GPU memory: %w", len(ids), err)
	}
	if err = t.pg.Repoint(t.graph, t.gpu, ids, backend.ListLocal); err != nil {
		return 0, 0, fmt.Errorf("hybrid: %w", err)
	}
	return int64(len(ids)), edges, nil
}

// reads are the list reads the graph's sampling counted: Local from GPU
// memory, Host from host memory.
func (t *hostTopology) reads() (backend.ReadCounts, error) { return t.pg.GraphReads(t.graph) }

// free releases the graph and both lists (after the trainer is closed).
func (t *hostTopology) free() {
	if t.graph != nil {
		backend.FreeGraph(t.be, t.graph)
		t.graph = nil
	}
	for _, l := range []*backend.Lists{&t.gpu, &t.host} {
		if *l != nil {
			t.pg.FreeLists(*l)
			*l = nil
		}
	}
}

// listRoom is the bytes of lists the GPU takes under host topology: share
// (0: DefaultListShare) of free, at most every list, none when free is
// negative (place's error then says what is missing).
func listRoom(free int64, share float64, listBytes int64) int64 {
	if share <= 0 {
		share = DefaultListShare
	}
	return max(0, min(listBytes, int64(share*float64(free))))
}
