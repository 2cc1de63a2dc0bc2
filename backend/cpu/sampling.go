package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// cpuGraph is a CSR used in place, with the relabeler's per-vertex table
// made on the first Relabel and the vertex space's on the first
// RelabelStart.
type cpuGraph struct {
	csr   *graph.CSR
	rel   *sample.Relabeler
	space *spaceTable
	// A view made by MaskGraph: the graph it masks (whose relabeler it
	// uses) and the mask, I32 [N].
	parent *cpuGraph
	skip   *buffer
	// A PeerGraph: where each vertex's list lived, and the reads counted.
	kind  []uint8
	reads *[backend.ListKinds]int64
}

// root is the graph a MaskGraph view masks, or cg itself.
func (cg *cpuGraph) root() *cpuGraph {
	if cg.parent != nil {
		return cg.parent
	}
	return cg
}

// MaskGraph is a view of g whose vertices v with skip[v] >= 0 have no
// neighbours as SampleLayer's destinations (see backend.Sampling).
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	c := b.begin("MaskGraph")
	defer c.end()
	cg := c.graph("g", g)
	if c.ok {
		cg = cg.root()
	}
	var x *buffer
	if c.ok {
		x = c.buf("skip", skip, backend.I32, int(cg.csr.NumNodes))
	}
	if !c.ok {
		return nil, c.b.err
	}
	return &cpuGraph{csr: cg.csr, parent: cg, skip: x}, nil
}

func (g *cpuGraph) NumNodes() int64 { return g.csr.NumNodes }
func (g *cpuGraph) NumEdges() int64 { return g.csr.NumEdges() }

// graph validates a Graph argument.
func (c *call) graph(name string, g backend.Graph) *cpuGraph {
	if !c.ok {
		return nil
	}
	cg, ok := g.(*cpuGraph)
	if !ok || cg == nil {
		c.failf("%s: graph of type %T does not belong to the cpu backend", name, g)
		return nil
	}
	return cg
}

// checkIDs records an error unless every id lies in [0, numNodes).
func (c *call) checkIDs(name string, ids []int32, numNodes int64) {
	if !c.ok {
		return
	}
	for i, v := range ids {
		if v < 0 || int64(v) >= numNodes {
			c.failf("%s[%d] = %d outside [0, %d)", name, i, v, numNodes)
			return
		}
	}
}

// SampleLayer samples up to fanout neighbours of each of the first nDst ids
// of dst with package sample's reference sampler (the key is (r.Seed,
// epoch, step, r.Stream) from r.Clock). It writes out.Indptr [nDst+1],
// out.Nbrs for the edges that fit, the true edge count into out.NumEdges,
// and copies dst into out.SrcIDs for the destinations that fit.
func (b *Backend) SampleLayer(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block) {
	c, ck := b.checkSampleLayer(g, dst, nDst, fanout, r, out)
	defer c.end()
	if !c.ok {
		return
	}
	c.sample(ck.g, ck.dst[:ck.nDst], fanout, ck.r, out, ck.outIndptr, ck.outNbrs, ck.outSrcIDs, ck.outNumEdgesP, nil)
}

// sample samples the live destinations ds of cg into out's checked
// buffers (SampleLayer's, and with an exclusion SampleExcluding's).
func (c *call) sample(cg *cpuGraph, ds []int32, fanout int, key rng.Key, out *backend.Block, indptr, nbrs, srcIDs []int32, nePtr *int32, ex *sample.Exclusion) {
	c.checkIDs("dst", ds, cg.csr.NumNodes)
	if !c.ok {
		return
	}
	var skip []int32
	if cg.skip != nil {
		skip = cg.skip.i32
	}
	total := sample.LayerExcluding(cg.csr, ds, fanout, key, indptr, nbrs[:out.NumEdges.Cap], c.b.threads, skip, ex)
	cg.countReads(ds, skip)
	*nePtr = int32(min(total, 1<<31-1))
	copy(srcIDs[:min(len(ds), out.NumSrc.Cap)], ds)
}

// Relabel assigns local ids with package sample's relabeler: destinations
// (the first NumDst entries of out.SrcIDs, as SampleLayer wrote them) keep
// 0..NumDst-1 and new neighbours get the next ids in order of first
// appearance in out.Nbrs. It writes out.SrcIDs past the destinations (the
// ids that fit), out.Indices for the live edges and the true source count
// into out.NumSrc.
func (b *Backend) Relabel(g backend.Graph, out *backend.Block) {
	c, ck := b.checkRelabel(g, out)
	defer c.end()
	if !c.ok {
		return
	}
	cg := ck.g.root()
	nDst, nEdges, nsPtr := ck.outNumDst, ck.outNumEdges, ck.outNumSrcP
	srcIDs, nbrs, local := ck.outSrcIDs, ck.outNbrs, ck.outIndices
	srcIDs = srcIDs[:out.NumSrc.Cap]
	dst := srcIDs[:min(nDst, len(srcIDs))]
	c.checkIDs("out.SrcIDs", dst, cg.csr.NumNodes)
	c.checkIDs("out.Nbrs", nbrs[:nEdges], cg.csr.NumNodes)
	if !c.ok {
		return
	}
	if cg.rel == nil {
		cg.rel = sample.NewRelabeler(cg.csr.NumNodes)
	}
	nSrc := cg.rel.Relabel(dst, nbrs[:nEdges], srcIDs, local[:nEdges])
	*nsPtr = int32(min(nSrc, 1<<31-1))
}
