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
	bc1 := 1 - math.Pow(float64(cfg.Beta1), float64(step))
	bc2 := 1 - math.Pow(float64(cfg.Beta2), float64(step))
	lrc := float32(float64(cfg.LR) / bc1)
	rbc2 := float32(1 / math.Sqrt(bc2))
	b1, b2, eps, wd := cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay
	b.rows(size, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := gs[i]
			if wd != 0 {
				g += wd * ps[i]
			}
			mi := b1*ms[i] + (1-b1)*g
			vi := b2*vs[i] + (1-b2)*g*g
			ms[i], vs[i] = mi, vi
			denom := float32(math.Sqrt(float64(vi)))*rbc2 + eps
			ps[i] -= lrc * mi / denom
		}
	})
}
