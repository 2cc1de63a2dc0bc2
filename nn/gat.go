package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// gatSlope is the negative slope of the LeakyReLU on attention scores
// (Veličković et al.; PyG's GATConv default).
const gatSlope = 0.2

// gatLayer is the graph attention layer (Veličković et al. 2018) with
// heads attention heads over a block's sampled edges plus each
// destination's self loop:
//
//	z = x·W                                     [Src, heads·dim]
//	s_ij = LeakyReLU(a_src·z_j + a_dst·z_i)     per head, slope 0.2
//	α_ij = softmax_j(s_ij) over j ∈ S(i) ∪ {i}, then attention dropout
//	h_i = Σ_j α_ij·z_j                          per head (+ b, applied by the model)
//
// A hidden layer concatenates its Heads heads (out = heads·dim, dim =
// Hidden/Heads); the top layer averages its OutHeads heads (out = dim =
// Classes; Veličković et al. use one on Cora, PyG's GAT model Heads). Unlike
// GCN and GIN, no rescaling by full over sampled degree: the softmax
// normalises over whatever neighbours were sampled (with all of them it is
// GATConv exactly). Where its input is narrower than its output the
// bottom layer computes the same in its aggregate-first form
// (gat_first.go), unless Config.GATProjectFirst.
//
// Parameters (row-major float32), named for the mapping to PyG's GATConv:
// layerN.w [in, heads·dim], whose transpose is lin.weight [heads·dim, in]
// (column h·dim+f is head h's feature f); layerN.att_src and
// layerN.att_dst [heads, dim], the same data as att_src and att_dst [1,
// heads, dim]; layerN.bias [heads·dim] (concatenated) or [dim] (averaged),
// GATConv's bias.
type gatLayer struct {
	be          backend.Backend
	att         backend.Attention // be's (checked by NewModel)
	l           int
	in          int
	heads, dim  int
	mean        bool    // the top layer: heads averaged
	p           float32 // attention dropout while training
	w           *Param  // [in, heads·dim]
	attSrc      *Param  // [heads, dim]
	attDst      *Param  // [heads, dim]
	b           *Param  // [out]
	forwardOnly bool    // an inference copy: no gradient workspaces
	sideWork            // the weight gradients put beside (besideWork)
	aggFirst    bool    // the aggregate-first form (gat_first.go): no projection of the sources
	first       gatFirst

	ws    workspace
	caps  Caps
	z, dz backend.Buffer // F32 [caps.Src, heads·dim]: x·W (kept for backward) and its gradient
	el    backend.Buffer // F32 [caps.Src, heads]: a_src·z_j
	er    backend.Buffer // F32 [caps.Dst, heads]: a_dst·z_i
	coef  backend.Buffer // F32 [caps.Dst+caps.Edges, heads]: attention after dropout (backend.Attention's layout)
	dcoef backend.Buffer // F32 [caps.Dst+caps.Edges, heads]
	del   backend.Buffer // F32 [caps.Src, heads]
	der   backend.Buffer // F32 [caps.Dst, heads]
	lastP float32        // attention dropout of the last forward, for backward
	lastR backend.Rand   // its stream
}

// newGAT makes layer l of a GAT model with input width in.
func newGAT(be backend.Backend, pa *paramAlloc, l, in int, cfg Config, seed uint64) (*gatLayer, error) {
	att, err := backend.AttentionOf(be)
	if err != nil {
		return nil, err
	}
	g := &gatLayer{be: be, att: att, l: l, in: in, p: cfg.AttnDropout, ws: workspace{be: be}, aggFirst: cfg.aggregatesFirst(l, in)}
	g.first.half = l == 0 && cfg.bf16Bottom()
	_, out := cfg.dims(l)
	g.heads, g.dim, g.mean = cfg.headDims(l, out)
	mk := func(p **Param, name string, shape ...int) {
		if err == nil {
			*p, err = newParam(pa, fmt.Sprintf("layer%d.%s", l, name), shape...)
		}
	}
	mk(&g.w, "w", in, g.heads*g.dim)
	mk(&g.attSrc, "att_src", g.heads, g.dim)
	mk(&g.attDst, "att_dst", g.heads, g.dim)
	mk(&g.b, "bias", out)
	if err != nil {
		for _, p := range g.params() {
			if p != nil {
				p.free(be)
			}
		}
		return nil, err
	}
	initGlorot(be, g.w, seed, l, 0)
	initGlorot(be, g.attSrc, seed, l, 1)
	initGlorot(be, g.attDst, seed, l, 2)
	return g, nil
}

func (g *gatLayer) params() []*Param { return []*Param{g.w, g.attSrc, g.attDst, g.b} }
func (g *gatLayer) bias() *Param     { return g.b }

func (g *gatLayer) reserve(c Caps) error {
	g.ws.release()
	g.caps = c
	if g.aggFirst {
		g.reserveFirst(c)
		return g.ws.done()
	}
	H, w := g.heads, g.heads*g.dim
	g.z = g.ws.alloc("gat projection", backend.F32, c.Src*w)
	g.el = g.ws.alloc("gat source scores", backend.F32, c.Src*H)
	g.er = g.ws.alloc("gat destination scores", backend.F32, c.Dst*H)
	g.coef = g.ws.alloc("gat attention", backend.F32, (c.Dst+c.Edges)*H)
	if !g.forwardOnly {
		g.dz = g.ws.allocRows("gat projection gradient", backend.F32, c.Src*w)
		g.dcoef = g.ws.alloc("gat attention gradient", backend.F32, (c.Dst+c.Edges)*H)
		g.del = g.ws.alloc("gat source score gradient", backend.F32, c.Src*H)
		g.der = g.ws.alloc("gat destination score gradient", backend.F32, c.Dst*H)
	}
	return g.ws.done()
}

func (g *gatLayer) release() { g.ws.release() }

// prepare has nothing to do: attention needs no degrees.
func (g *gatLayer) prepare(blk *backend.Block, deg backend.Buffer) {}

// forward writes h[:NumDst] (h [caps.Dst, out]) from x [caps.Src, in]. While
// training, attention dropout draws from stream 160+l keyed by the
// destinations' vertex ids.
func (g *gatLayer) forward(blk *backend.Block, x, h backend.Buffer, ps pass) {
	be, H, D := g.be, g.heads, g.dim
	g.lastP, g.lastR = 0, backend.Rand{}
	if ps.train && g.p > 0 {
		g.lastP, g.lastR = g.p, ps.rand
		g.lastR.Stream = attnDropoutStream + uint32(g.l)
		g.lastR.Keys = blk.SrcIDs // destination i is source i: masks keyed by vertex id
	}
	if g.aggFirst {
		g.forwardFirst(blk, x, h)
		return
	}
	be.Linear(x, blk.NumSrc, g.w.W, g.in, H*D, g.z, false)
	g.att.HeadDots(g.z, blk.NumSrc, blk.NumDst, H, D, g.attSrc.W, g.attDst.W, g.el, g.er)
	g.att.EdgeSoftmax(blk, g.el, g.er, H, gatSlope, g.lastP, g.lastR, g.coef)
	g.att.HeadAggregate(blk, g.coef, g.z, H, D, g.mean, h, false)
}

// backward overwrites the gradients of w, att_src and att_dst from dh
// [caps.Dst, out] and, when dx is non-nil, overwrites dx [caps.Src, in]
// (rows [0, NumSrc) valid); w's runs beside dx's (besideWork). It redraws
// the attention dropout of the last forward.
func (g *gatLayer) backward(blk *backend.Block, x, dh, dx backend.Buffer) {
	be, H, D := g.be, g.heads, g.dim
	if g.aggFirst { // the bottom layer (aggregatesFirst), whose dx the model never asks for
		g.backwardFirst(blk, x, dh)
		return
	}
	// dz: the scores' share written (no zeroed buffer, no read of dz), then
	// the messages' share added.
	g.att.HeadAggregateBackward(blk, g.coef, g.z, dh, H, D, g.mean, g.dcoef, nil)
	g.att.EdgeSoftmaxBackward(blk, g.el, g.er, H, gatSlope, g.lastP, g.lastR, g.dcoef, g.del, g.der)
	g.att.HeadDotBackward(g.z, g.del, g.der, blk.NumSrc, blk.NumDst, H, D, g.attSrc.W, g.attDst.W, g.dz, false, g.attSrc.G, g.attDst.G)
	g.att.HeadAggregateBackward(blk, g.coef, g.z, dh, H, D, g.mean, nil, g.dz)
	g.beside(be, func() { be.LinearBackwardWeight(x, g.dz, blk.NumSrc, g.in, H*D, g.w.G, false) })
	if dx != nil {
		be.LinearBackwardData(g.dz, blk.NumSrc, g.w.W, g.in, H*D, dx, false)
	}
}

func (g *gatLayer) workspace() *workspace { return &g.ws }

func (g *gatLayer) inferCopy() layer {
	c := *g
	c.ws = workspace{be: g.be}
	c.forwardOnly = true
	return &c
}
