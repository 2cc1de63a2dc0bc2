package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// sageLayer is GraphSAGE with mean aggregation (Hamilton et al. 2017):
//
//	h_dst = x_dst·W_self + mean_{sampled nbrs j}(x_j)·W_neigh   (+ b, applied by the model)
//
// computed, as in the paper, as one product of the concatenation
// cat = [x_dst | mean] [capDst, 2·in] with the stacked weights
// [W_self; W_neigh] [2·in, out]: one GEMM of depth 2·in runs faster than two
// of depth in and reads and writes h once. The weight gradients are one
// product too; the input gradient is two, since its halves go to different
// places (x_dst directly, the neighbours through the aggregation).
type sageLayer struct {
	sideWork      // the weight gradients put beside (besideWork)
	be            backend.Backend
	in, out       int
	wSelf, wNeigh *Param         // [in, out] each: views of the stacked [2·in, out] block
	w, g          backend.Buffer // the stacked block [2·in, out] and its gradient
	b             *Param         // [out]

	// half: bfloat16 products (Config.BF16Bottom): cat is BF16, the
	// products read wh, a rounded copy of w, and backward's dh is BF16.
	half bool
	wh   backend.Buffer

	ws    workspace
	caps  Caps
	edgeW backend.Buffer // F32 [caps.Edges] 1/sampled degree
	cat   backend.Buffer // F32 [caps.Dst, 2·in] [x_dst | neighbour mean] (kept for backward)

	// The input gradient (layers above the bottom, inputGrad): dcat is the
	// gradient of cat, gathered by source through t (the block's edges
	// grouped by source) into the input's rows.
	inputGrad bool
	dcat      backend.Buffer // F32 [caps.Dst, 2·in]
	t         backend.Transposed
}

// newSAGE makes layer l; half multiplies it in bfloat16 (Config.BF16Bottom).
// Layers above the bottom (l > 0) reserve what their input gradient needs.
func newSAGE(be backend.Backend, pa *paramAlloc, l, in, out int, seed uint64, half bool) (*sageLayer, error) {
	s := &sageLayer{be: be, in: in, out: out, half: half, inputGrad: l > 0, ws: workspace{be: be}}
	block, ws, err := newStacked(pa, []string{fmt.Sprintf("layer%d.w_self", l), fmt.Sprintf("layer%d.w_neigh", l)}, in, out)
	if err != nil {
		return nil, err
	}
	s.wSelf, s.wNeigh, s.w, s.g = ws[0], ws[1], block.W, block.G
	if s.b, err = newParam(pa, fmt.Sprintf("layer%d.bias", l), out); err != nil {
		s.wSelf.free(be)
		return nil, err
	}
	initGlorot(be, s.wSelf, seed, l, 0)
	initGlorot(be, s.wNeigh, seed, l, 1)
	return s, nil
}

func (s *sageLayer) params() []*Param { return []*Param{s.wSelf, s.wNeigh, s.b} }
func (s *sageLayer) bias() *Param     { return s.b }

func (s *sageLayer) reserve(c Caps) error {
	s.ws.release()
	s.caps = c
	s.edgeW = s.ws.alloc("sage edge weights", backend.F32, c.Edges)
	catType := backend.F32
	if s.half {
		catType = backend.BF16
		s.wh = s.ws.alloc("sage weights (bfloat16)", backend.BF16, 2*s.in*s.out)
	}
	s.cat = s.ws.allocRows("sage concatenation", catType, c.Dst*2*s.in)
	if s.inputGrad {
		s.dcat = s.ws.allocRows("sage concatenation gradient", backend.F32, c.Dst*2*s.in)
		s.t = backend.Transposed{
			SrcPtr:  s.ws.alloc("sage edges by source (offsets)", backend.I32, c.Src+1),
			Perm:    s.ws.alloc("sage edges by source", backend.I32, c.Edges),
			EdgeDst: s.ws.alloc("sage edge destinations", backend.I32, c.Edges),
		}
	}
	return s.ws.done()
}

func (s *sageLayer) release() { s.ws.release() }

// prepare computes the block's mean weights (deg is unused).
func (s *sageLayer) prepare(blk *backend.Block, deg backend.Buffer) {
	s.be.MeanWeights(blk, s.edgeW)
}

// forward writes h[:NumDst] (h [caps.Dst, out]) from x [caps.Src, in].
func (s *sageLayer) forward(blk *backend.Block, x, h backend.Buffer, ps pass) {
	switch t := ps.tiered; {
	case ps.table:
		s.be.AggregateConcatTable(blk, s.edgeW, x, s.in, s.cat)
	case t != nil:
		t.Ops.AggregateConcatTiered(blk, s.edgeW, t.Cache, t.Slot, x, s.in, s.cat)
	default:
		s.be.AggregateConcat(blk, s.edgeW, x, s.in, s.cat)
	}
	addHot(ps.hot, blk, s.in, s.cat, 2*s.in, s.in)
	w := s.w
	if s.half {
		s.be.Convert(s.w, s.wh)
		w = s.wh
	}
	s.be.Linear(s.cat, blk.NumDst, w, 2*s.in, s.out, h, false)
}

// readsTable: the layer's input rows may come from a feature table
// (pass.table) or a tiered store's cache (pass.tiered); its backward never
// reads them.
func (s *sageLayer) readsTable() {}

// readsBF16: the layer's input may be bfloat16 (its concatenation widens
// it; its backward never reads it).
func (s *sageLayer) readsBF16() bool { return true }

// backward overwrites the weight gradients from dh [caps.Dst, out] (BF16
// when half, which has no dx) and, when dx is non-nil (a layer with
// inputGrad), overwrites dx [caps.Src, in] rows [0, NumSrc).
func (s *sageLayer) backward(blk *backend.Block, x, dh, dx backend.Buffer) {
	s.weightGrads(dh, blk)
	if dx == nil {
		return
	}
	s.transpose(blk)
	s.inputGradient(blk, dh, backend.ActGrad{}, dx)
}

// transpose groups blk's edges by source for the input gradient (a
// training forward pass issues it beside the layers; see gatherer).
func (s *sageLayer) transpose(blk *backend.Block) {
	if s.inputGrad {
		s.be.TransposeBlock(blk, s.t)
	}
}

// backwardAct is backward whose input gradient continues through the
// activation that produced x (act): dx (F32, or BF16 for a bfloat16 layer
// below) receives the gradient before that activation, and act.DBias the
// bias gradient of the layer below. transpose must have run on blk.
func (s *sageLayer) backwardAct(blk *backend.Block, dh backend.Buffer, act backend.ActGrad, dx backend.Buffer) {
	s.weightGrads(dh, blk)
	s.inputGradient(blk, dh, act, dx)
}

// weightGrads runs beside the input gradient (besideWork): the
// concatenation and dh, which it reads, are not written again in the pass.
func (s *sageLayer) weightGrads(dh backend.Buffer, blk *backend.Block) {
	s.beside(s.be, func() { s.be.LinearBackwardWeight(s.cat, dh, blk.NumDst, 2*s.in, s.out, s.g, false) })
}

// inputGradient: one product gives the gradient of the whole
// concatenation (dh times the stacked weights), and one gather by source
// adds each input row's two parts and passes them through act.
func (s *sageLayer) inputGradient(blk *backend.Block, dh backend.Buffer, act backend.ActGrad, dx backend.Buffer) {
	s.be.LinearBackwardData(dh, blk.NumDst, s.w, 2*s.in, s.out, s.dcat, false)
	s.be.AggregateConcatBackward(blk, s.t, s.edgeW, s.dcat, s.in, act, dx)
}

func (l *sageLayer) workspace() *workspace { return &l.ws }
