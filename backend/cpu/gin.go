package cpu

import "github.com/fanout-gnn/fanout/backend"

// GINWeights sets edgeW[e] = min(srcDeg[i], fanout)/s_i (srcDeg[i]/s_i
// with fanout < 0) and selfW[i] = 1 + eps[0] for the live destinations
// (see backend.Sparse).
func (b *Backend) GINWeights(blk *backend.Block, srcDeg backend.Buffer, fanout int, eps, edgeW, selfW backend.Buffer) {
	c, ck := b.checkGINWeights(blk, srcDeg, fanout, eps, edgeW, selfW)
	defer c.end()
	if !c.ok {
		return
	}
	v, deg, ew, sw := ck.blk, ck.srcDeg, ck.edgeW, ck.selfW
	self := 1 + ck.eps[0]
	b.rows(v.nDst, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sw[i] = self
			e0, e1 := v.edges(i)
			if e1 == e0 {
				continue
			}
			w := float32(ginCap(float64(deg[i]), fanout) / float64(e1-e0))
			for e := e0; e < e1; e++ {
				ew[e] = w
			}
		}
	})
}

// ginCap is the degree GIN's training sum saw: min(deg, fanout), or deg
// when every neighbour was sampled (fanout < 0).
func ginCap(deg float64, fanout int) float64 {
	if fanout >= 0 {
		return min(deg, float64(fanout))
	}
	return deg
}

// DotSum overwrites out[0] with Σ a·b over the live rows, accumulated in
// float64 in row order.
func (b *Backend) DotSum(a, bb backend.Buffer, n backend.Count, dim int, out backend.Buffer) {
	c, ck := b.checkDotSum(a, bb, n, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	var s float64
	for i, x := range ck.a[:ck.n*dim] {
		s += float64(x) * float64(ck.b[i])
	}
	ck.out[0] = float32(s)
}
