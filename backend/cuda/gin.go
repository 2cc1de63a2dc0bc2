package cuda

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// GINWeights sets edgeW[e] = min(srcDeg[i], fanout)/s_i (srcDeg[i]/s_i
// with fanout < 0) and selfW[i] = 1 + eps[0], all read on the device
// (kernels/gin.cu).
func (b *Backend) GINWeights(blk *backend.Block, srcDeg backend.Buffer, fanout int, eps, edgeW, selfW backend.Buffer) {
	c := b.begin("GINWeights")
	defer c.end()
	a := c.block(blk)
	deg := c.buf("srcDeg", srcDeg, backend.F32, a.srcCap)
	ep := c.buf("eps", eps, backend.F32, 1)
	ew := c.buf("edgeW", edgeW, backend.F32, a.edgeCap)
	sw := c.buf("selfW", selfW, backend.F32, a.dstCap)
	if !c.ok {
		return
	}
	c.args().ptr(a.indptr.addr()).ptr(deg.addr()).i32(min(max(fanout, -1), math.MaxInt32)).ptr(ep.addr()).ptr(a.nd).i32(a.dstCap).ptr(a.ne).
		i32(a.edgeCap).ptr(a.ns).i32(a.srcCap).ptr(ew.addr()).ptr(sw.addr())
	g, t := c.warpRows(a.dstCap)
	c.launch("gin_weights", g, t, 0)
}

// DotSum overwrites out[0] with Σ a·b over the live rows, in one block with
// a fixed order of additions (kernels/gin.cu).
func (b *Backend) DotSum(a, bb backend.Buffer, n backend.Count, dim int, out backend.Buffer) {
	c := b.begin("DotSum")
	defer c.end()
	c.dim("dim", dim)
	nP := c.count("n", n)
	as := c.buf("a", a, backend.F32, n.Cap*dim)
	bs := c.buf("b", bb, backend.F32, n.Cap*dim)
	os := c.buf("out", out, backend.F32, 1)
	if !c.ok {
		return
	}
	c.args().ptr(as.addr()).ptr(bs.addr()).ptr(nP).i32(n.Cap).i32(dim).ptr(os.addr())
	c.launch("dot_sum", d1(1), d1(256), 0)
}
