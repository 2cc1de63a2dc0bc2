package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// Adam updates param in place from grad with moments m and v (all F32 of one
// length), at step t (the int32 at t.Off, 1-based, already incremented), as
// torch.optim.Adam with L2 weight decay added to the gradient:
//
//	g = grad + wd·param; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²
//	param -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + eps)
//
// The update is skipped while cfg.Skip (an optional I32 flag, element 0) is
// non-zero; otherwise a step below 1 is an error.
func (b *Backend) Adam(param, grad, m, v backend.Buffer, t backend.Count, cfg backend.AdamConfig) {
	c, ck := b.checkAdam(param, grad, m, v, t, cfg)
	defer c.end()
	if !c.ok || ck.cfgSkip {
		return
	}
	ps, gs, ms, vs, size := ck.param, ck.grad, ck.m, ck.v, len(ck.param)
	step := *ck.tP
	if step < 1 {
		c.raise(errcode.AdamStep, int(step), 0, 0)
		return
	}
	st := newAdamStep(cfg, step, ck.cfgLRScale)
	b.rows(size, 4096, func(lo, hi int) {
		st.update(ps[lo:hi], gs[lo:hi], ms[lo:hi], vs[lo:hi])
	})
}

// adamStep is one step of Adam: the configuration and the bias
// corrections of step t, computed in float64 as the kernels compute them.
type adamStep struct {
	lrc, rbc2, b1, b2, eps, wd float32
}

// scale, when set, holds the schedule's factor of the learning rate.
func newAdamStep(cfg backend.AdamConfig, t int32, scale []float32) adamStep {
	bc1 := 1 - math.Pow(float64(cfg.Beta1), float64(t))
	bc2 := 1 - math.Pow(float64(cfg.Beta2), float64(t))
	lr := cfg.LR
	if scale != nil {
		lr *= scale[0]
	}
	return adamStep{
		lrc: float32(float64(lr) / bc1), rbc2: float32(1 / math.Sqrt(bc2)),
		b1: cfg.Beta1, b2: cfg.Beta2, eps: cfg.Eps, wd: cfg.WeightDecay,
	}
}

// update steps the elements of p with gradient g and moments m, v (all of
// one length).
func (s adamStep) update(p, g, m, v []float32) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	lrc, rbc2, b1, b2, eps, wd := s.lrc, s.rbc2, s.b1, s.b2, s.eps, s.wd
	for i := range p {
		gi := g[i]
		if wd != 0 {
			gi += wd * p[i]
		}
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		denom := float32(math.Sqrt(float64(vi)))*rbc2 + eps
		p[i] -= lrc * mi / denom
	}
}

// SparseAdam steps rows ids[:n] of table and of its moments m and v with
// the rows of grad (see backend.Dense), each element as Adam steps it; the
// other rows are untouched. The update is skipped while cfg.Skip is set;
// otherwise a step below 1 and an id outside the table are errors, found
// before anything changes.
func (b *Backend) SparseAdam(table, m, v backend.Buffer, dim int, ids backend.Buffer, n backend.Count, grad backend.Buffer, t backend.Count, cfg backend.AdamConfig) {
	c, ck := b.checkSparseAdam(table, m, v, dim, ids, n, grad, t, cfg)
	defer c.end()
	if !c.ok || ck.cfgSkip {
		return
	}
	step := *ck.tP
	if step < 1 {
		c.raise(errcode.SparseAdamStep, int(step), 0, 0)
		return
	}
	rows, live := len(ck.table)/dim, ck.ids[:ck.n]
	for i, id := range live {
		if id < 0 || int(id) >= rows {
			c.raise(errcode.SparseAdamRow, i, int(id), rows)
			return
		}
	}
	ps, gs, ms, vs := ck.table, ck.grad, ck.m, ck.v
	st := newAdamStep(cfg, step, ck.cfgLRScale)
	b.rows(len(live), max(1, 4096/dim), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := int(live[i]) * dim
			st.update(ps[r:r+dim], gs[i*dim:(i+1)*dim], ms[r:r+dim], vs[r:r+dim])
		}
	})
}
