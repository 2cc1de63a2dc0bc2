package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// TypedBatch is one sampled mini-batch of a typed graph: per layer (bottom
// first) the blocks of every relation and the vertices of every type.
// Relation r's block at layer l has its destination type's destinations
// (NumDst), its source type's sources (NumSrc, SrcIDs) and Indices into
// them. Dst[l][t] are type t's destinations at layer l, which are its
// sources at layer l+1 (Src[l+1][t]).
type TypedBatch struct {
	Rels [][]*backend.Block // [layer][relation]
	Dst  [][]backend.Count  // [layer][type]
	Src  [][]backend.Count  // [layer][type]
	// X are the bottom layer's input rows of each type: F32
	// [Src[0][t].Cap, Types[t].InDim] (features, or a learned embedding's
	// rows).
	X []backend.Buffer
	// DX, where set for a type, receives the gradient of the loss with
	// respect to its X (F32 like X), which a training Backward writes (a
	// learned embedding's rows need it; other types' are not computed).
	DX []backend.Buffer
	// Compact, for a model that projects each relation's own sources
	// (Config.CompactsSources: RGAT; nil for the others), are relation-local
	// views of Rels: NumSrc the relation's distinct sources (within one type
	// the destinations first, as the type's numbering has them), Indices
	// numbering them, the others in order of first appearance, SrcIDs
	// their rows among the source type's (type-local, not vertex ids),
	// Bipartite (GATConv without self loops: a view within one type too).
	// Its capacity is CompactCap's.
	Compact [][]*backend.Block // [layer][relation]
}

// relWeights are one relation's parameters at a layer: RSAGE's self and
// neighbour weights and bias; RGCN's relation weight (neigh, without
// bases); RGAT's projection of the sources (neigh: GATConv's lin, shared
// with the destinations, or where their widths differ lin_src and wDst,
// lin_dst), attention vectors and bias (rgat.go).
type relWeights struct {
	self, neigh, bias    *Param
	wDst, attSrc, attDst *Param
}

// params lists the relation's parameters in the model's order (nil ones
// left out): self, neigh, wDst, attSrc, attDst, bias.
func (w relWeights) params() []*Param {
	var ps []*Param
	for _, p := range []*Param{w.self, w.neigh, w.wDst, w.attSrc, w.attDst, w.bias} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// heteroLayer is one layer of a typed model.
type heteroLayer struct {
	rels []relWeights // per relation
	// RGCN: each type's root weight and bias, and with bases the bases
	// [B, in·out] and each relation's coefficients [R, B], from which the
	// relation weights (the rels' neigh, not parameters then) are made.
	root, tbias []*Param
	bases, comp *Param
	// norms are each type's normalisation of a hidden layer's output
	// (Config.Norm; nil without, and at the top layer).
	norms []*normLayer
}

// heteroNet is the layers of a typed model (KindRSAGE, KindRGCN,
// KindRGAT) with their workspaces; Model delegates to it.
type heteroNet struct {
	be     backend.Backend
	cfg    Config
	layers []*heteroLayer

	ws   workspace
	caps []LayerCaps
	// Per layer and type: the output after bias, activation and dropout
	// (act), its gradient (dAct), the dropout mask; per layer and relation:
	// the edge weights (1/sampled degree), the neighbour mean (agg, kept for
	// the backward pass) and its gradient.
	act, dAct, mask [][]backend.Buffer
	edgeW, agg      [][]backend.Buffer
	dAgg            backend.Buffer // F32 [the largest agg]: one relation's at a time
	dropP           []float32
	training        bool // the last forward pass trained (normalisation's statistics)
	// head is jumping knowledge's head over the target type's outputs of
	// every layer (Config.JK; nil without): the seeds are the first rows
	// of each, as the destinations of a layer are the first sources of the
	// layer above.
	head *jkHead
	// RGCN with bases: each layer's relation weights made from them (F32
	// [R, in·out]), one layer's gradients at a time, and a count of R (the
	// rows of the products that make them).
	basisW   []backend.Buffer
	basisG   backend.Buffer
	relCount backend.Count
	// RGAT: the attention ops, each layer's and relation's kept forward
	// state, the gradients' scratch and the attention dropout of the last
	// forward pass (rgat.go).
	att   backend.Attention
	hot   backend.HotRows // the compacted relations' gradient scatter
	gat   [][]gatRel
	gatG  gatGrads
	attnP float32
	attnR backend.Rand

	loss, correct backend.Buffer // F32 [1], I32 [1]
}

// newHetero makes a typed model's layers, their parameters from pa.
func newHetero(be backend.Backend, cfg Config, seed uint64, pa *paramAlloc) (*heteroNet, error) {
	h := &heteroNet{be: be, cfg: cfg, ws: workspace{be: be}, dropP: make([]float32, cfg.Layers)}
	if cfg.Kind == KindRGAT {
		var err error
		if h.att, err = backend.AttentionOf(be); err != nil {
			return nil, err
		}
		if h.hot, err = backend.HotRowsOf(be); err != nil {
			return nil, err
		}
	}
	for l := range cfg.Layers {
		ly, err := h.newLayer(pa, l, seed)
		if err != nil {
			return nil, err
		}
		h.layers = append(h.layers, ly)
	}
	var err error
	if h.head, err = newJK(be, pa, cfg, seed); err != nil {
		return nil, err
	}
	return h, nil
}

// newLayer makes layer l's parameters, named after PyTorch Geometric's
// modules (the export maps them): RSAGE's per relation
// "layerL.REL.w_self", ".w_neigh", ".bias"; RGCN's per relation
// "layerL.REL.w" (or "layerL.bases" and "layerL.comp"), per type
// "layerL.TYPE.root", ".bias"; RGAT's per relation "layerL.REL.w" (or
// ".w_src" and ".w_dst"), ".att_src", ".att_dst", ".bias".
func (h *heteroNet) newLayer(pa *paramAlloc, l int, seed uint64) (*heteroLayer, error) {
	c := h.cfg
	ly := &heteroLayer{rels: make([]relWeights, len(c.Relations))}
	slot := 0
	weight := func(name string, in, out int) (*Param, error) {
		p, err := newParam(pa, fmt.Sprintf("layer%d.%s", l, name), in, out)
		if err == nil {
			initGlorot(h.be, p, seed, l, slot)
			slot++
		}
		return p, err
	}
	var err error
	for r, rel := range c.Relations {
		inS, out := c.typeDims(l, rel.Src)
		inT, _ := c.typeDims(l, rel.Dst)
		w := &ly.rels[r]
		switch {
		case c.Kind == KindRSAGE:
			if w.self, err = weight(rel.Name+".w_self", inT, out); err == nil {
				if w.neigh, err = weight(rel.Name+".w_neigh", inS, out); err == nil {
					w.bias, err = newParam(pa, fmt.Sprintf("layer%d.%s.bias", l, rel.Name), out)
				}
			}
		case c.Kind == KindRGAT:
			err = h.newGATRel(pa, w, l, rel, weight)
		case c.Bases == 0:
			w.neigh, err = weight(rel.Name+".w", inS, out)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.normed(l) {
		for _, ty := range c.Types {
			_, out := c.typeDims(l, 0)
			n, err := makeNorm(h.be, pa, c, fmt.Sprintf("layer%d.%s.norm", l, ty.Name), out)
			if err != nil {
				return nil, err
			}
			ly.norms = append(ly.norms, n)
		}
	}
	if c.Kind != KindRGCN {
		return ly, nil
	}
	for t, ty := range c.Types {
		in, out := c.typeDims(l, t)
		root, err := weight(ty.Name+".root", in, out)
		if err != nil {
			return nil, err
		}
		b, err := newParam(pa, fmt.Sprintf("layer%d.%s.bias", l, ty.Name), out)
		if err != nil {
			return nil, err
		}
		ly.root, ly.tbias = append(ly.root, root), append(ly.tbias, b)
	}
	if c.Bases > 0 {
		in, out := c.typeDims(l, 0)
		if ly.bases, err = newParam(pa, fmt.Sprintf("layer%d.bases", l), c.Bases, in*out); err != nil {
			return nil, err
		}
		// Each basis is a Glorot-uniform [in, out] weight.
		initGlorotRows(h.be, ly.bases, seed, l, slot, in, out)
		slot++
		if ly.comp, err = weight("comp", len(c.Relations), c.Bases); err != nil {
			return nil, err
		}
	}
	return ly, nil
}

// params lists layer ly's parameters: per relation (RSAGE: w_self,
// w_neigh, bias; RGCN: w; RGAT: w or w_src and w_dst, att_src, att_dst,
// bias), then RGCN's per type (root, bias) and bases.
func (ly *heteroLayer) params() []*Param {
	var ps []*Param
	for _, w := range ly.rels {
		ps = append(ps, w.params()...)
	}
	for t := range ly.root {
		ps = append(ps, ly.root[t], ly.tbias[t])
	}
	if ly.bases != nil {
		ps = append(ps, ly.bases, ly.comp)
	}
	for _, n := range ly.norms {
		ps = append(ps, n.params()...)
	}
	return ps
}

// norm is type t's normalisation at layer l, or nil.
func (h *heteroNet) norm(l, t int) *normLayer {
	if ns := h.layers[l].norms; ns != nil {
		return ns[t]
	}
	return nil
}

// updateNorms folds the last training pass's batch statistics into every
// batch normalisation's running ones, unless skip is set.
func (h *heteroNet) updateNorms(skip backend.Buffer) {
	for _, ly := range h.layers {
		for _, n := range ly.norms {
			n.update(skip)
		}
	}
}

// params is every parameter of the net, bottom layer first.
func (h *heteroNet) params() []*Param {
	var ps []*Param
	for _, ly := range h.layers {
		ps = append(ps, ly.params()...)
	}
	if h.head != nil {
		ps = append(ps, h.head.params()...)
	}
	return ps
}

// free releases the parameters' own buffers (none from arenas) and the
// workspaces.
func (h *heteroNet) free() {
	h.ws.release()
	for _, p := range h.params() {
		p.free(h.be)
	}
}
