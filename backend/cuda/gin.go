package cuda

import "github.com/fanout-gnn/fanout/backend"

// GINWeights sets edgeW[e] = min(srcDeg[i], fanout)/s_i (srcDeg[i]/s_i
// with fanout < 0) and selfW[i] = 1 + eps[0], all read on the device
// (kernels/gin.cu).
func (b *Backend) GINWeights(blk *backend.Block, srcDeg backend.Buffer, fanout int, eps, edgeW, selfW backend.Buffer) {
	c, ck := b.checkGINWeights(blk, srcDeg, fanout, eps, edgeW, selfW)
	defer c.end()
	if !c.ok {
		return
	}
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchGinWeights(&ck, g, t, 0)
}

// DotSum overwrites out[0] with Σ a·b over the live rows, in one block with
// a fixed order of additions (kernels/gin.cu).
func (b *Backend) DotSum(a, bb backend.Buffer, n backend.Count, dim int, out backend.Buffer) {
	c, ck := b.checkDotSum(a, bb, n, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchDotSum(&ck, d1(1), d1(256), 0)
}
