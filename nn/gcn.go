package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// gcnOrder says whether a GCN layer aggregates before or after its matmul.
type gcnOrder uint8

const (
	gcnAuto        gcnOrder = iota // choose by cost at reserve
	gcnAggFirst                    // agg = Â·x [Dst, in]; h = agg·W
	gcnMatmulFirst                 // xw = x·W [Src, out]; h = Â·xw
)

// gcnLayer is the Kipf-Welling graph convolution on a sampled block:
//
//	h_dst = Â·x·W   (+ b, applied by the model)
//
// with Â from backend GCNWeights: self loops, symmetric normalisation by
// full-graph degrees (srcDeg, gathered from the model's degree table by
// SrcIDs) and the neighbour sum rescaled by full/sampled degree.
//
// Order: at reserve the layer compares the multiply-adds of the two orders
// for the envelope, aggregate first (Edges·in + Dst·in·out) against matmul
// first (Src·in·out + Edges·out), and takes the cheaper (aggregate first on
// a tie). With sampling Src is well above Dst, so aggregate first nearly
// always wins.
type gcnLayer struct {
	sideWork // the weight gradient put beside (besideWork)
	be       backend.Backend
	in, out  int
	w        *Param // [in, out]
	b        *Param // [out]
	force    gcnOrder

	ws     workspace
	caps   Caps
	order  gcnOrder       // chosen at reserve
	srcDeg backend.Buffer // F32 [caps.Src] full-graph degree of each source
	edgeW  backend.Buffer // F32 [caps.Edges]
	selfW  backend.Buffer // F32 [caps.Dst]
	tmp    backend.Buffer // agg [Dst, in] (agg first) or xw [Src, out] (matmul first)
	dTmp   backend.Buffer // gradient of tmp, same shape
}

func newGCN(be backend.Backend, pa *paramAlloc, l, in, out int, seed uint64) (*gcnLayer, error) {
	g := &gcnLayer{be: be, in: in, out: out, ws: workspace{be: be}}
	var err error
	if g.w, err = newParam(pa, fmt.Sprintf("layer%d.w", l), in, out); err != nil {
		return nil, err
	}
	if g.b, err = newParam(pa, fmt.Sprintf("layer%d.bias", l), out); err != nil {
		g.w.free(be)
		return nil, err
	}
	initGlorot(be, g.w, seed, l, 0)
	return g, nil
}

func (g *gcnLayer) params() []*Param { return []*Param{g.w, g.b} }
func (g *gcnLayer) bias() *Param     { return g.b }

// chooseOrder returns the cheaper order for the envelope c.
func (g *gcnLayer) chooseOrder(c Caps) gcnOrder {
	if g.force != gcnAuto {
		return g.force
	}
	aggFirst := int64(c.Edges)*int64(g.in) + int64(c.Dst)*int64(g.in)*int64(g.out)
	mmFirst := int64(c.Src)*int64(g.in)*int64(g.out) + int64(c.Edges)*int64(g.out)
	if mmFirst < aggFirst {
		return gcnMatmulFirst
	}
	return gcnAggFirst
}

func (g *gcnLayer) reserve(c Caps) error {
	g.ws.release()
	g.caps = c
	g.order = g.chooseOrder(c)
	g.srcDeg = g.ws.alloc("gcn source degrees", backend.F32, c.Src)
	g.edgeW = g.ws.alloc("gcn edge weights", backend.F32, c.Edges)
	g.selfW = g.ws.alloc("gcn self weights", backend.F32, c.Dst)
	n := c.Dst * g.in
	if g.order == gcnMatmulFirst {
		n = c.Src * g.out
	}
	g.tmp = g.ws.alloc("gcn intermediate", backend.F32, n)
	g.dTmp = g.ws.alloc("gcn intermediate gradient", backend.F32, n)
	return g.ws.done()
}

func (g *gcnLayer) release() { g.ws.release() }

// prepare gathers the full-graph degree of each source from deg (F32 [N])
// and computes the block's normalisation weights.
func (g *gcnLayer) prepare(blk *backend.Block, deg backend.Buffer) {
	g.be.Gather(deg, 1, blk.SrcIDs, blk.NumSrc, g.srcDeg)
	g.be.GCNWeights(blk, g.srcDeg, g.edgeW, g.selfW)
}

// forward writes h[:NumDst] (h [caps.Dst, out]) from x [caps.Src, in].
func (g *gcnLayer) forward(blk *backend.Block, x, h backend.Buffer, ps pass) {
	be := g.be
	if g.order == gcnMatmulFirst {
		be.Linear(x, blk.NumSrc, g.w.W, g.in, g.out, g.tmp, false)
		be.Aggregate(blk, g.edgeW, g.selfW, g.tmp, g.out, h)
		return
	}
	be.Aggregate(blk, g.edgeW, g.selfW, x, g.in, g.tmp)
	addHot(ps.hot, blk, g.in, g.tmp, g.in, 0)
	be.Linear(g.tmp, blk.NumDst, g.w.W, g.in, g.out, h, false)
}

// backward overwrites w's gradient from dh [caps.Dst, out] and, when dx is
// non-nil, overwrites dx [caps.Src, in] (rows [0, NumSrc) valid).
func (g *gcnLayer) backward(blk *backend.Block, x, dh, dx backend.Buffer) {
	be := g.be
	if g.order == gcnMatmulFirst {
		be.Fill(g.dTmp, 0)
		be.AggregateBackward(blk, g.edgeW, g.selfW, dh, g.out, g.dTmp)
		g.beside(be, func() { be.LinearBackwardWeight(x, g.dTmp, blk.NumSrc, g.in, g.out, g.w.G, false) })
		if dx != nil {
			be.LinearBackwardData(g.dTmp, blk.NumSrc, g.w.W, g.in, g.out, dx, false)
		}
		return
	}
	g.beside(be, func() { be.LinearBackwardWeight(g.tmp, dh, blk.NumDst, g.in, g.out, g.w.G, false) })
	if dx == nil {
		return
	}
	be.LinearBackwardData(dh, blk.NumDst, g.w.W, g.in, g.out, g.dTmp, false)
	be.Fill(dx, 0)
	be.AggregateBackward(blk, g.edgeW, g.selfW, g.dTmp, g.in, dx)
}

func (l *gcnLayer) workspace() *workspace { return &l.ws }
