package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// The relational GAT (KindRGAT), the model of MLPerf Training's GNN
// benchmark (its reference RGNN(model="rgat")): in each layer, per relation
// r from type S to type T, a graph attention convolution as PyTorch
// Geometric's GATConv(in, out/heads, heads, add_self_loops=False) computes
// it inside HeteroConv({r: GATConv}, aggr="sum"):
//
//	z_j = x_j·W_src                  the sources j (type S) that r's edges read  [n_r, heads·dim]
//	z_i = x_i·W_dst                  the destinations i (type T)   [NumDst(T), heads·dim]
//	                                 (between two types only a_dst·z_i = x_i·u is made: gatRel.u)
//	s_ij = LeakyReLU(a_src·z_j + a_dst·z_i)                       per head, slope 0.2
//	α_ij = softmax over i's sampled edges of r alone, then attention dropout
//	y_i += Σ_j α_ij·z_j + b_r        heads concatenated, or averaged at the top
//
// No self loop, even within one type: a destination without edges of r
// gets b_r alone from it. W_src = W_dst = W, GATConv's lin (built so for
// one input width), where the relation's sources and destinations have
// rows of one width: every layer above the bottom, and at the bottom the
// relations between types of one width (MLPerf's reference gives every
// type 1024 features and one lin); where the widths differ, two weights,
// GATConv((in_src, in_dst), ...)'s lin_src and lin_dst. PyG projects every
// source of type S for each relation; here each relation projects the rows
// its edges read, its own sources (TypedBatch.Compact, n_r of them), which
// gives the same result. Within one type (S = T) the destinations are the
// first of them, so z_i is z's row i.
// Each type's sum over its relations, biases included, then takes the
// typed models' normalisation, ReLU and dropout below the top (finish in
// hetero_step.go); the top layer averages OutHeads heads of Classes
// columns, or with jumping knowledge is hidden like the others and the
// head maps the target type's rows (JKLast: MLPerf's final Linear).
//
// Parameters per layer and relation (row-major float32): layerL.REL.w [in,
// heads·dim] (or .w_src [in_S, heads·dim] and .w_dst [in_T, heads·dim]),
// .att_src and .att_dst [heads, dim], .bias [heads·dim], or [classes] at
// an averaging top. Attention dropout (AttnDropout) in layer l draws from
// stream 160+l, each relation its own seed, keyed by the destination's
// row as the typed models' dropout is.

// gatRel is one relation's attention state at a layer, kept from the
// forward pass for the backward one (F32 at the layer's capacities; unset
// for relations into types without rows there).
type gatRel struct {
	x    backend.Buffer // [CompactCap, in(S)]: the relation's own sources' rows (TypedBatch.Compact)
	z    backend.Buffer // [CompactCap, heads·dim]: their projection
	el   backend.Buffer // [CompactCap, heads]: a_src·z_j
	er   backend.Buffer // [Dst.Cap(T), heads]: a_dst·z_i
	coef backend.Buffer // [Dst.Cap(T) + Edges(r), heads]: attention after dropout (backend.Attention's layout)
	// Between two types (S ≠ T; within one, z's first rows are the
	// destinations'), the destinations' projections serve their scores
	// alone, so er = x_i·u with u_h = W_dst,h·a_dst,h: u [in(T), heads], and
	// in(T) as a count in backend memory (HeadDot over W_dst's rows).
	u      backend.Buffer
	inRows backend.Count
}

// gatGrads is the attention backward's scratch, one relation at a time
// (each buffer as large as the largest relation's): the sources'
// projection's gradient (dz), the destination score weights' (du), the
// coefficients' (dcoef), the scores' (del, der),
// the unused half of a single HeadDotBackward (none, F32 [heads·dim]) and
// its count, zero (I32 [1], 0); a relation's own sources' gradient (dx)
// before it is added into their type's rows at slot (I32: i at i, over
// the largest source capacity).
type gatGrads struct {
	dz, du, dcoef, del, der, none backend.Buffer
	zero, dx, slot                backend.Buffer
}

// newGATRel makes relation rel's attention parameters at layer l in w:
// its projection (one, or one for the sources and one for the destinations
// where their widths differ), attention vectors (Glorot-uniform through
// weight, as GATConv's) and bias.
func (h *heteroNet) newGATRel(pa *paramAlloc, w *relWeights, l int, rel RelSpec, weight func(name string, in, out int) (*Param, error)) error {
	c := h.cfg
	inS, out := c.typeDims(l, rel.Src)
	inT, _ := c.typeDims(l, rel.Dst)
	heads, dim, _ := c.headDims(l, out)
	var err error
	if inS == inT {
		w.neigh, err = weight(rel.Name+".w", inS, heads*dim)
	} else if w.neigh, err = weight(rel.Name+".w_src", inS, heads*dim); err == nil {
		w.wDst, err = weight(rel.Name+".w_dst", inT, heads*dim)
	}
	if err == nil {
		w.attSrc, err = weight(rel.Name+".att_src", heads, dim)
	}
	if err == nil {
		w.attDst, err = weight(rel.Name+".att_dst", heads, dim)
	}
	if err == nil {
		w.bias, err = newParam(pa, fmt.Sprintf("layer%d.%s.bias", l, rel.Name), out)
	}
	return err
}

// dstWeight is the projection of relation r's destinations at layer l:
// its own (w_dst), or the one it shares with its sources.
func (ly *heteroLayer) dstWeight(r int) *Param {
	if w := ly.rels[r].wDst; w != nil {
		return w
	}
	return ly.rels[r].neigh
}

// reserveGAT allocates the attention state of every live relation for
// caps, and the backward's scratch for the largest.
func (h *heteroNet) reserveGAT(caps []LayerCaps) {
	c, ws := h.cfg, &h.ws
	h.gat = grid[gatRel](c.Layers, len(c.Relations))
	var z, du, coef, el, er, hd, dx, slots int
	for l, lc := range caps {
		for _, tc := range lc.Types {
			slots = max(slots, tc.Src)
		}
		for r, rel := range c.Relations {
			dst := lc.Types[rel.Dst].Dst
			if dst == 0 {
				continue
			}
			inS, inT, H, D, _ := h.gatDims(l, r)
			name := fmt.Sprintf("layer %d %s attention", l, rel.Name)
			g := &h.gat[l][r]
			src := c.CompactCap(lc, r)
			g.x = ws.allocRows(name+" source rows", backend.F32, src*inS)
			dx = max(dx, src*inS)
			g.z = ws.alloc(name+" source projection", backend.F32, src*H*D)
			if rel.Src != rel.Dst {
				g.u = ws.alloc(name+" destination score weights", backend.F32, inT*H)
				g.inRows = ws.count(name+" destination input width", inT)
				du = max(du, inT*H)
			}
			g.el = ws.alloc(name+" source scores", backend.F32, src*H)
			g.er = ws.alloc(name+" destination scores", backend.F32, dst*H)
			g.coef = ws.alloc(name+" coefficients", backend.F32, (dst+lc.Edges[r])*H)
			z, coef, el, er, hd = max(z, src*H*D), max(coef, (dst+lc.Edges[r])*H), max(el, src*H), max(er, dst*H), max(hd, H*D)
		}
	}
	h.gatG = gatGrads{
		dz:    ws.allocRows("attention source projection gradients", backend.F32, z),
		du:    ws.alloc("attention destination score weight gradients", backend.F32, du),
		dcoef: ws.alloc("attention coefficient gradients", backend.F32, coef),
		del:   ws.alloc("attention source score gradients", backend.F32, el),
		der:   ws.alloc("attention destination score gradients", backend.F32, er),
		none:  ws.alloc("attention vector gradients (unused)", backend.F32, hd),
		zero:  ws.alloc("zero count", backend.I32, 1),
		dx:    ws.allocRows("attention source row gradients", backend.F32, dx),
		slot:  ws.iota("attention source slots", slots),
	}
}

// gatSources are relation r's own sources at layer l (TypedBatch.Compact)
// as its attention reads them: their rows (which gather copies from their
// type's when asked), count and block.
func (h *heteroNet) gatSources(b *TypedBatch, l, r int, gather bool) (x backend.Buffer, n backend.Count, blk *backend.Block) {
	rel, g := h.cfg.Relations[r], &h.gat[l][r]
	cb := b.Compact[l][r]
	if gather {
		in, _ := h.cfg.typeDims(l, rel.Src)
		h.be.Gather(h.input(b, l, rel.Src), in, cb.SrcIDs, cb.NumSrc, g.x)
	}
	return g.x, cb.NumSrc, cb
}

// attnRand is relation r's attention dropout at layer l in the last
// forward pass (unused while attnP is 0).
func (h *heteroNet) attnRand(l, r int) backend.Rand {
	if h.attnP == 0 {
		return backend.Rand{}
	}
	return backend.Rand{Seed: rng.Derive(h.attnR.Seed, r+1), Clock: h.attnR.Clock, Stream: attnDropoutStream + uint32(l)}
}

// gatDims are relation r's widths at layer l: the sources' and the
// destinations' input widths, and the heads, width per head and mean of
// its attention.
func (h *heteroNet) gatDims(l, r int) (inS, inT, heads, dim int, mean bool) {
	c := h.cfg
	inS, out := c.typeDims(l, c.Relations[r].Src)
	inT, _ = c.typeDims(l, c.Relations[r].Dst)
	heads, dim, mean = c.headDims(l, out)
	return inS, inT, heads, dim, mean
}

// gatMessages writes the sum of the attention convolutions of the
// relations rs into type t at layer l (their biases not yet added) into
// its outputs.
func (h *heteroNet) gatMessages(b *TypedBatch, l, t int, rs []int) {
	for k, r := range rs {
		h.gatForward(b, l, r, h.act[l][t], k > 0)
	}
}

// gatForward writes relation r's attention convolution at layer l into y
// (its destination type's outputs), or adds it with acc.
func (h *heteroNet) gatForward(b *TypedBatch, l, r int, y backend.Buffer, acc bool) {
	be, ly, g := h.be, h.layers[l], &h.gat[l][r]
	rel := h.cfg.Relations[r]
	inS, inT, H, D, mean := h.gatDims(l, r)
	xS, nS, blk := h.gatSources(b, l, r, true)
	nT := b.Dst[l][rel.Dst]
	be.Linear(xS, nS, ly.rels[r].neigh.W, inS, H*D, g.z, false)
	if g.u == nil { // one type: the destinations' projections are z's first rows
		h.att.HeadDots(g.z, nS, nT, H, D, ly.rels[r].attSrc.W, ly.rels[r].attDst.W, g.el, g.er)
	} else {
		h.att.HeadDot(g.z, nS, H, D, ly.rels[r].attSrc.W, g.el)
		h.att.HeadDot(ly.dstWeight(r).W, g.inRows, H, D, ly.rels[r].attDst.W, g.u)
		be.Linear(h.input(b, l, rel.Dst), nT, g.u, inT, H, g.er, false)
	}
	h.att.EdgeSoftmax(blk, g.el, g.er, H, gatSlope, h.attnP, h.attnRand(l, r), g.coef)
	h.att.HeadAggregate(blk, g.coef, g.z, H, D, mean, y, acc)
}

// gatMessagesBackward is gatMessages' backward: from type t's gradient
// before its biases at layer l, every relation's parameter gradients, and
// its inputs' gradients added into theirs.
func (h *heteroNet) gatMessagesBackward(b *TypedBatch, l, t int, rs []int) {
	for _, r := range rs {
		h.gatBackward(b, l, r, h.dAct[l][t])
	}
}

// gatBackward is gatForward's backward for the gradient dy of its output:
// it overwrites relation r's parameter gradients at layer l and adds to
// its source and destination types' input gradients (where wanted). It
// redraws the attention dropout of the last forward pass.
func (h *heteroNet) gatBackward(b *TypedBatch, l, r int, dy backend.Buffer) {
	be, ly, g, sc := h.be, h.layers[l], &h.gat[l][r], &h.gatG
	w, rel := ly.rels[r], h.cfg.Relations[r]
	inS, inT, H, D, mean := h.gatDims(l, r)
	xS, nS, blk := h.gatSources(b, l, r, false)
	nT := b.Dst[l][rel.Dst]
	dz, dcoef := be.View(sc.dz, 0, g.z.Len()), be.View(sc.dcoef, 0, g.coef.Len())
	del, der := be.View(sc.del, 0, g.el.Len()), be.View(sc.der, 0, g.er.Len())
	be.Fill(dz, 0)
	h.att.HeadAggregateBackward(blk, g.coef, g.z, dy, H, D, mean, dcoef, dz)
	h.att.EdgeSoftmaxBackward(blk, g.el, g.er, H, gatSlope, h.attnP, h.attnRand(l, r), dcoef, del, der)
	// Each score vector's own backward, where the pair's second part has
	// no rows (a zero count at the first's capacity).
	none := func(n backend.Count) backend.Count { return backend.Count{Buf: sc.zero, Cap: n.Cap} }
	if g.u == nil { // one type: the destinations' scores are z's first rows'
		h.att.HeadDotBackward(g.z, del, der, nS, nT, H, D, w.attSrc.W, w.attDst.W, dz, true, w.attSrc.G, w.attDst.G)
	} else {
		h.att.HeadDotBackward(g.z, del, del, nS, none(nS), H, D, w.attSrc.W, w.attSrc.W, dz, true, w.attSrc.G, sc.none)
	}
	be.LinearBackwardWeight(xS, dz, nS, inS, H*D, w.neigh.G, false)
	if g.u != nil {
		// er = x_T·u: u's gradient, then W_dst's and a_dst's through u_h =
		// W_dst,h·a_dst,h (added into W's where it is shared), and the
		// destinations' rows'.
		xT, dxT, wd := h.input(b, l, rel.Dst), h.inputGrad(b, l, rel.Dst), ly.dstWeight(r)
		du := be.View(sc.du, 0, g.u.Len())
		be.LinearBackwardWeight(xT, der, nT, inT, H, du, false)
		if w.wDst != nil {
			be.Fill(wd.G, 0)
		}
		h.att.HeadDotBackward(wd.W, du, du, g.inRows, none(g.inRows), H, D, w.attDst.W, w.attDst.W, wd.G, true, w.attDst.G, sc.none)
		if dxT != nil {
			be.LinearBackwardData(der, nT, g.u, inT, H, dxT, true)
		}
	}
	dxS := h.inputGrad(b, l, rel.Src)
	if dxS != nil { // the relation's own sources' rows, added into their type's
		dx := be.View(sc.dx, 0, g.x.Len())
		be.LinearBackwardData(dz, nS, w.neigh.W, inS, H*D, dx, false)
		h.hot.ScatterAddRows(sc.slot, dxS, inS, blk.SrcIDs, nS, dx, nil)
	}
}
