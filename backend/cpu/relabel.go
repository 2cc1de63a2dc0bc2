package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// spaceTable is a graph's table for relabelling one vertex space over
// several blocks (RelabelStart, RelabelAdd), the twin of the CUDA
// backend's per-graph table (kernels/relabel.cu): per vertex gen<<32 |
// local id, valid while gen is the space's. A RelabelStart begins a
// generation; its RelabelAdd calls continue it. Stamps are invalidated by
// the generation, not by clearing (except when it wraps).
type spaceTable struct {
	stamp []uint64 // [numNodes]
	gen   uint64   // the current space's generation, in units of 1<<32; 0: none begun
}

const genMask = ^uint64(math.MaxUint32)

// spaceTable returns the table of g's vertex space, made on first use.
func (cg *cpuGraph) spaceTable() *spaceTable {
	cg = cg.root()
	if cg.space == nil {
		cg.space = &spaceTable{stamp: make([]uint64, cg.csr.NumNodes)}
	}
	return cg.space
}

// start begins a space: dst[i] gets local id i (a repeated destination
// keeps its first), and srcIDs[i] = dst[i] for i < len(srcIDs).
func (s *spaceTable) start(dst, srcIDs []int32) {
	s.gen += 1 << 32
	if s.gen == 0 { // wrapped: old stamps could alias, clear them
		clear(s.stamp)
		s.gen = 1 << 32
	}
	for i, v := range dst {
		if s.stamp[v]&genMask != s.gen {
			s.stamp[v] = s.gen | uint64(i)
		}
		if i < len(srcIDs) {
			srcIDs[i] = v
		}
	}
}

// add relabels nbrs into the space, base ids in it so far: an id of the
// space keeps its local id, a new one gets the next (written to srcIDs when
// it fits). It writes local[e] for every edge and returns the new count.
func (s *spaceTable) add(nbrs, srcIDs, local []int32, base int64) int64 {
	n := base
	for e, v := range nbrs {
		st := s.stamp[v]
		id := int64(uint32(st))
		if st&genMask != s.gen {
			id = n
			s.stamp[v] = s.gen | uint64(uint32(min(n, math.MaxInt32)))
			if n < int64(len(srcIDs)) {
				srcIDs[n] = v
			}
			n++
		}
		local[e] = int32(min(id, math.MaxInt32))
	}
	return n
}

// inSpace reports whether every id lies among g's vertices; at the first
// that does not it raises code (position, id, vertex count).
func (c *call) inSpace(code errcode.Code, ids []int32, g *cpuGraph) bool {
	n := g.NumNodes()
	for i, v := range ids {
		if v < 0 || int64(v) >= n {
			c.raise(code, i, int(v), int(min(n, math.MaxInt32)))
			return false
		}
	}
	return true
}

// RelabelStart begins relabelling the vertex space of space (see
// backend.Sampling): srcIDs[:nDst] = dst[:nDst] (those that fit), nSrc =
// nDst, and destination i holds local id i in space's table.
func (b *Backend) RelabelStart(space backend.Graph, dst backend.Buffer, nDst backend.Count, srcIDs backend.Buffer, nSrc backend.Count) {
	c, ck := b.checkRelabelStart(space, dst, nDst, srcIDs, nSrc)
	defer c.end()
	if !c.ok {
		return
	}
	ds := ck.dst[:ck.nDst]
	if !c.inSpace(errcode.RelabelStartID, ds, ck.space) {
		return
	}
	ck.space.spaceTable().start(ds, ck.srcIDs[:nSrc.Cap])
	*ck.nSrcP = int32(len(ds))
}

// RelabelAdd relabels blk.Nbrs[:NumEdges] into the space begun by the last
// RelabelStart on space (see backend.Sampling): known ids keep their local
// ids, new ones are numbered after nSrc's live value (its true value, even
// past its capacity) in order of first appearance. It writes blk.Indices,
// the new ids that fit into srcIDs and the true count into nSrc.
func (b *Backend) RelabelAdd(space backend.Graph, blk *backend.Block, srcIDs backend.Buffer, nSrc backend.Count) {
	c, ck := b.checkRelabelAdd(space, blk, srcIDs, nSrc)
	defer c.end()
	if !c.ok {
		return
	}
	nbrs := ck.blkNbrs[:ck.blkNumEdges]
	if !c.inSpace(errcode.RelabelAddID, nbrs, ck.space) {
		return
	}
	s := ck.space.spaceTable()
	if s.gen == 0 {
		c.failf("space: no RelabelStart began its space")
		return
	}
	base := int64(max(*ck.nSrcP, 0))
	n := s.add(nbrs, ck.srcIDs[:nSrc.Cap], ck.blkIndices[:ck.blkNumEdges], base)
	*ck.nSrcP = int32(min(n, math.MaxInt32))
}
