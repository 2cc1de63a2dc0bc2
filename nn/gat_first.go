package nn

import (
	"github.com/fanout-gnn/fanout/backend"
)

// The aggregate-first form of GAT's bottom layer (the default where it
// applies; Config.GATProjectFirst keeps the other).
// With W_h head h's columns of w, a source's score and its head-h message
// are linear in its input row x_j, so the layer can aggregate the in-wide
// input rows before it projects them:
//
//	u_h = W_h·a_h                       u_src, u_dst [in, heads] (HeadDot over w's rows)
//	el = x·u_src, er = x[:Dst]·u_dst    [Src, heads], [Dst, heads] (ScoreProducts)
//	agg[i, h·in+f] = Σ_j α_ij,h·x_j[f]  [Dst, heads·in] (SharedAggregate)
//	h_i[h·dim:(h+1)·dim] = agg_i[h·in:(h+1)·in]·W_h  (HeadLinear)
//
// Every edge then reads an in-wide row instead of a heads·dim-wide one, and
// no source is projected; the products run over destinations only, one a
// head (one batched product). The parameters, the softmax, attention
// dropout, the self loop and overflowed edges are those of gatLayer's
// other form; the results differ by float32 rounding (the scores' and
// messages' products associate differently). It has no input gradient: it
// is used for the bottom layer only. Its input rows may be bfloat16 (a
// bfloat16 table's rows gathered as they are), which every op reading
// them widens exactly: half the bytes, the same bits.

// aggregatesFirst reports whether layer l of input width in takes the
// aggregate-first form: GAT's bottom layer, when it concatenates its heads
// (a hidden layer) and in < heads·dim, unless Config.GATProjectFirst.
func (c Config) aggregatesFirst(l, in int) bool {
	return !c.GATProjectFirst && c.Kind == KindGAT && l == 0 && c.hiddenOut(0) && in < c.Hidden
}

// gatFirst holds the aggregate-first form's workspace.
type gatFirst struct {
	// half: bfloat16 head products (Config.BF16Bottom): agg and dagg are
	// BF16, the products read wh, a rounded copy of w, and backward's dh
	// is BF16 (the model's rounded output gradient).
	half       bool
	wh         backend.Buffer // BF16 [in, heads·dim]
	inRows     backend.Count  // in, in backend memory: w's rows, for HeadDot
	uSrc, uDst backend.Buffer // F32 [in, heads]: W_h·a_src,h and W_h·a_dst,h
	agg        backend.Buffer // F32 or BF16 (half) [caps.Dst, heads·in]: SharedAggregate's out
	dagg       backend.Buffer // F32 or BF16 (half) [caps.Dst, heads·in]
	duSrc      backend.Buffer // F32 [in, heads]
	duDst      backend.Buffer // F32 [in, heads]
}

// reserveFirst allocates the aggregate-first form's workspace for c, and
// the buffers the two forms share (scores and coefficients).
func (g *gatLayer) reserveFirst(c Caps) {
	ws, H, hin := &g.ws, g.heads, g.heads*g.in
	f := &g.first
	aggType := backend.F32
	if f.half {
		aggType = backend.BF16
		f.wh = ws.alloc("gat weights (bfloat16)", backend.BF16, g.in*H*g.dim)
	}
	f.inRows = ws.count("gat input rows", g.in)
	f.uSrc = ws.alloc("gat source score weights", backend.F32, g.in*H)
	f.uDst = ws.alloc("gat destination score weights", backend.F32, g.in*H)
	f.agg = ws.allocRows("gat input aggregate", aggType, c.Dst*hin)
	g.el = ws.allocRows("gat source scores", backend.F32, c.Src*H)
	g.er = ws.allocRows("gat destination scores", backend.F32, c.Dst*H)
	g.coef = ws.alloc("gat attention", backend.F32, (c.Dst+c.Edges)*H)
	if g.forwardOnly {
		return
	}
	f.dagg = ws.allocRows("gat input aggregate gradient", aggType, c.Dst*hin)
	f.duSrc = ws.alloc("gat source score weight gradient", backend.F32, g.in*H)
	f.duDst = ws.alloc("gat destination score weight gradient", backend.F32, g.in*H)
	g.dcoef = ws.alloc("gat attention gradient", backend.F32, (c.Dst+c.Edges)*H)
	g.del = ws.allocRows("gat source score gradient", backend.F32, c.Src*H)
	g.der = ws.allocRows("gat destination score gradient", backend.F32, c.Dst*H)
}

// readsBF16: in the aggregate-first form the layer's input rows may be
// bfloat16 (its score products, SharedAttention's ScoreProducts, and its
// aggregate widen them) where its heads are few enough for ScoreProducts;
// the projection-first form's product takes float32 rows.
func (g *gatLayer) readsBF16() bool { return g.aggFirst && g.heads <= backend.MaxScoreHeads }

// scores writes el = x[:NumSrc]·u_src and er = x[:NumDst]·u_dst:
// ScoreProducts, or Linear for more heads than it takes (x float32 then,
// readsBF16).
func (g *gatLayer) scores(blk *backend.Block, x backend.Buffer) {
	f := &g.first
	if g.heads <= backend.MaxScoreHeads {
		g.att.ScoreProducts(x, blk.NumSrc, blk.NumDst, f.uSrc, f.uDst, g.in, g.heads, g.el, g.er)
		return
	}
	g.be.Linear(x, blk.NumSrc, f.uSrc, g.in, g.heads, g.el, false)
	g.be.Linear(x, blk.NumDst, f.uDst, g.in, g.heads, g.er, false)
}

// scoresBackward overwrites the gradients of scores' u_src and u_dst from
// del and der.
func (g *gatLayer) scoresBackward(blk *backend.Block, x backend.Buffer) {
	f := &g.first
	if g.heads <= backend.MaxScoreHeads {
		g.att.ScoreProductsBackward(x, g.del, g.der, blk.NumSrc, blk.NumDst, g.in, g.heads, f.duSrc, f.duDst)
		return
	}
	g.be.LinearBackwardWeight(x, g.del, blk.NumSrc, g.in, g.heads, f.duSrc, false)
	g.be.LinearBackwardWeight(x, g.der, blk.NumDst, g.in, g.heads, f.duDst, false)
}

// forwardFirst is forward in the aggregate-first form: x F32 or BF16
// (readsBF16) [caps.Src, in], h F32 [caps.Dst, heads·dim].
func (g *gatLayer) forwardFirst(blk *backend.Block, x, h backend.Buffer) {
	f, H, D := &g.first, g.heads, g.dim
	if f.half {
		g.be.Convert(g.w.W, f.wh)
	}
	g.att.HeadDots(g.w.W, f.inRows, f.inRows, H, D, g.attSrc.W, g.attDst.W, f.uSrc, f.uDst)
	g.scores(blk, x)
	g.att.EdgeSoftmax(blk, g.el, g.er, H, gatSlope, g.lastP, g.lastR, g.coef)
	g.att.SharedAggregate(blk, g.coef, x, H, g.in, f.agg)
	g.att.HeadLinear(f.agg, blk.NumDst, f.weights(g), H, g.in, D, h)
}

// weights is w as the head products read it: w itself, or (half) its
// rounded copy, made by the forward pass (backward reuses it).
func (f *gatFirst) weights(g *gatLayer) backend.Buffer {
	if !f.half {
		return g.w.W
	}
	return f.wh
}

// backwardFirst overwrites the gradients of w, att_src and att_dst from dh
// [caps.Dst, heads·dim] (BF16 when half): w's is the sum of its two paths,
// the projection's (HeadLinearBackwardWeight, written first) and the
// scores' (HeadDotBackward adds it), both beside the coefficients'
// gradients (besideWork).
func (g *gatLayer) backwardFirst(blk *backend.Block, x, dh backend.Buffer) {
	f, H, D := &g.first, g.heads, g.dim
	g.beside(g.be, func() { g.att.HeadLinearBackwardWeight(f.agg, dh, blk.NumDst, H, g.in, D, g.w.G) })
	g.att.HeadLinearBackwardData(dh, blk.NumDst, f.weights(g), H, g.in, D, f.dagg)
	g.att.SharedAggregateBackward(blk, x, f.dagg, H, g.in, g.dcoef)
	g.att.EdgeSoftmaxBackward(blk, g.el, g.er, H, gatSlope, g.lastP, g.lastR, g.dcoef, g.del, g.der)
	// Beside too, after the projection's share of w's gradient there.
	g.beside(g.be, func() {
		g.scoresBackward(blk, x)
		g.att.HeadDotBackward(g.w.W, f.duSrc, f.duDst, f.inRows, f.inRows, H, D, g.attSrc.W, g.attDst.W, g.w.G, true, g.attSrc.G, g.attDst.G)
	})
}
