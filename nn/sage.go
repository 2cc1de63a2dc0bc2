package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// sageLayer is GraphSAGE with mean aggregation (Hamilton et al. 2017):
//
//	h_dst = x_dst·W_self + mean_{sampled nbrs j}(x_j)·W_neigh   (+ b, applied by the model)
//
// The neighbour mean is aggregated first into agg [capDst, in], then both
// products run on capDst rows. x_dst is the view of the first capDst rows of
// x (destinations come first among the sources).
type sageLayer struct {
	be            backend.Backend
	in, out       int
	wSelf, wNeigh *Param // [in, out]
	b             *Param // [out]

	ws    workspace
	caps  Caps
	edgeW backend.Buffer // F32 [caps.Edges] 1/sampled degree
	agg   backend.Buffer // F32 [caps.Dst, in] neighbour means (kept for backward)
	dAgg  backend.Buffer // F32 [caps.Dst, in] gradient of agg
}

func newSAGE(be backend.Backend, l, in, out int, seed uint64) (*sageLayer, error) {
	s := &sageLayer{be: be, in: in, out: out, ws: workspace{be: be}}
	var err error
	if s.wSelf, err = newParam(be, fmt.Sprintf("layer%d.w_self", l), in, out); err != nil {
		return nil, err
	}
	if s.wNeigh, err = newParam(be, fmt.Sprintf("layer%d.w_neigh", l), in, out); err != nil {
		s.wSelf.free(be)
		return nil, err
	}
	if s.b, err = newParam(be, fmt.Sprintf("layer%d.bias", l), out); err != nil {
		s.wSelf.free(be)
		s.wNeigh.free(be)
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
	s.agg = s.ws.alloc("sage aggregate", backend.F32, c.Dst*s.in)
	s.dAgg = s.ws.alloc("sage aggregate gradient", backend.F32, c.Dst*s.in)
	if err := s.ws.err; err != nil {
		s.ws.release()
		return err
	}
	return nil
}

func (s *sageLayer) release() { s.ws.release() }

// prepare computes the block's mean weights (deg is unused).
func (s *sageLayer) prepare(blk *backend.Block, deg backend.Buffer) {
	s.be.MeanWeights(blk, s.edgeW)
}

// forward writes h[:NumDst] (h [caps.Dst, out]) from x [caps.Src, in].
func (s *sageLayer) forward(blk *backend.Block, x, h backend.Buffer) {
	be := s.be
	be.Aggregate(blk, s.edgeW, nil, x, s.in, s.agg)
	xDst := rows(be, x, s.caps.Dst, s.in)
	be.Linear(xDst, blk.NumDst, s.wSelf.W, s.in, s.out, h, false)
	be.Linear(s.agg, blk.NumDst, s.wNeigh.W, s.in, s.out, h, true)
}

// backward overwrites the weight gradients from dh [caps.Dst, out] and, when
// dx is non-nil, overwrites dx [caps.Src, in] (rows [0, NumSrc) valid).
func (s *sageLayer) backward(blk *backend.Block, x, dh, dx backend.Buffer) {
	be := s.be
	xDst := rows(be, x, s.caps.Dst, s.in)
	be.LinearBackwardWeight(xDst, dh, blk.NumDst, s.in, s.out, s.wSelf.G, false)
	be.LinearBackwardWeight(s.agg, dh, blk.NumDst, s.in, s.out, s.wNeigh.G, false)
	if dx == nil {
		return
	}
	be.LinearBackwardData(dh, blk.NumDst, s.wNeigh.W, s.in, s.out, s.dAgg, false)
	be.Fill(dx, 0)
	be.AggregateBackward(blk, s.edgeW, nil, s.dAgg, s.in, dx)
	dxDst := rows(be, dx, s.caps.Dst, s.in)
	be.LinearBackwardData(dh, blk.NumDst, s.wSelf.W, s.in, s.out, dxDst, true)
}

func (l *sageLayer) workspace() *workspace { return &l.ws }
