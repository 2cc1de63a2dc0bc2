package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
	"github.com/fanout-gnn/fanout/sample"
)

// EdgeSeeds writes a link step's ends: the positives' ends and their
// negatives in layout; see backend.Link.
func (b *Backend) EdgeSeeds(pairs, ids backend.Buffer, n backend.Count, k, layout, nodes int, dist backend.Buffer, r backend.Rand, ends backend.Buffer, nEnds, nPairs backend.Count) {
	c, ck := b.checkEdgeSeeds(pairs, ids, n, k, layout, nodes, dist, r, ends, nEnds, nPairs)
	defer c.end()
	if !c.ok {
		return
	}
	live, ps, ss, ds, key := ck.n, ck.pairs, ck.ends, ck.dist, ck.r
	edges := len(ps) / 2
	for i, e := range ck.ids[:live] {
		if e < 0 || int(e) >= edges {
			c.raise(errcode.LinkEdge, i, int(e), edges)
			return
		}
		ss[i], ss[live+i] = ps[2*e], ps[2*e+1]
		for j := 0; j < k && layout == backend.NegOwn; j++ {
			ss[2*live+i*k+j] = sample.Negative(key.Word(uint32(e), uint32(j)), nodes, ds)
		}
	}
	if layout == backend.NegShared && live > 0 {
		sample.SharedNegatives(key, backend.SharedIndex, nodes, ds, backend.SharedBudget(k), ss[2*live:2*live+k])
	}
	*ck.nEndsP, *ck.nPairsP = int32(backend.LinkEnds(live, k, layout)), int32(live*(1+k))
}

// GroupRows lists the live positions grouped by row (a stable counting
// sort); see backend.Link.
func (b *Backend) GroupRows(rows backend.Buffer, nEnds, nRows backend.Count, ptr, order backend.Buffer) {
	c, ck := b.checkGroupRows(rows, nEnds, nRows, ptr, order)
	defer c.end()
	if !c.ok {
		return
	}
	m, u, rs, ps, os := ck.nEnds, ck.nRows, ck.rows, ck.ptr, ck.order
	clear(ps[:u+1])
	for q, r := range rs[:m] {
		if r < 0 || int(r) >= u {
			c.raise(errcode.LinkRow, q, int(r), u)
			return
		}
		ps[r+1]++
	}
	for r := 0; r < u; r++ {
		ps[r+1] += ps[r]
	}
	next := append([]int32(nil), ps[:u]...) // host scratch: the rows' next slots
	for q, r := range rs[:m] {
		os[next[r]] = int32(q)
		next[r]++
	}
}

// pairEnds is the positions (a, c) of pair p in a batch of b positives
// with k negatives each in layout.
func pairEnds(p, b, k, layout int) (a, c int) {
	if p < b {
		return p, b + p
	}
	q := p - b
	i := q / max(k, 1)
	return i, backend.NegativeAt(i, q-i*k, b, k, layout)
}

// PairProduct writes the elementwise products of the live pairs' rows;
// see backend.Link.
func (b *Backend) PairProduct(x backend.Buffer, dim int, n backend.Count, k, layout int, rows, h backend.Buffer) {
	c, ck := b.checkPairProduct(x, dim, n, k, layout, rows, h)
	defer c.end()
	if !c.ok {
		return
	}
	live, xs, rs, hs := ck.n, ck.x, ck.rows, ck.h
	xrows := len(xs) / dim
	for q, r := range rs[:backend.LinkEnds(live, k, layout)] {
		if r < 0 || int(r) >= xrows {
			c.failf("rows[%d] = %d outside x's %d rows", q, r, xrows)
			return
		}
	}
	row := func(q int) []float32 { r := int(rs[q]); return xs[r*dim : (r+1)*dim] }
	b.pool.run(live*(1+k), func(p int) {
		a, o := pairEnds(p, live, k, layout)
		xa, xo, hp := row(a), row(o), hs[p*dim:(p+1)*dim]
		for j := range hp {
			hp[j] = xa[j] * xo[j]
		}
	})
}

// PairProductBackward writes the gradient of PairProduct's input, row by
// row in GroupRows's order; see backend.Link.
func (b *Backend) PairProductBackward(x, dh backend.Buffer, dim int, n backend.Count, k, layout int, rows, ptr, order backend.Buffer, nRows backend.Count, dx backend.Buffer) {
	c, ck := b.checkPairProductBackward(x, dh, dim, n, k, layout, rows, ptr, order, nRows, dx)
	defer c.end()
	if !c.ok {
		return
	}
	live, u, xs, ds, rs, ps, os, out := ck.n, ck.nRows, ck.x, ck.dh, ck.rows, ck.ptr, ck.order, ck.dx
	m := backend.LinkEnds(live, k, layout)
	for r := 0; r < u; r++ {
		if ps[r] < 0 || ps[r] > ps[r+1] || int(ps[r+1]) > m {
			c.failf("ptr[%d:%d] = [%d, %d] is not GroupRows's for %d positions", r, r+2, ps[r], ps[r+1], m)
			return
		}
	}
	for q, r := range rs[:m] {
		if r < 0 || int(r) >= u {
			c.failf("rows[%d] = %d outside [0, %d)", q, r, u)
			return
		}
	}
	b.pool.run(u, func(r int) {
		acc := out[r*dim : (r+1)*dim]
		clear(acc)
		add := func(p, other int) {
			g, o := ds[p*dim:(p+1)*dim], int(rs[other])
			xo := xs[o*dim : (o+1)*dim]
			for j := range acc {
				acc[j] += g[j] * xo[j]
			}
		}
		for _, q := range os[ps[r]:ps[r+1]] {
			pairsOf(int(q), live, k, layout, add)
		}
	})
}

// pairsOf calls add(p, other) for every pair p that position q is an end
// of, with the position of p's other end, in PairProductBackward's order.
func pairsOf(q, b, k, layout int, add func(p, other int)) {
	switch {
	case q < b: // a source: its positive, then its negatives
		add(q, b+q)
		for j := 0; j < k; j++ {
			add(b+q*k+j, backend.NegativeAt(q, j, b, k, layout))
		}
	case q < 2*b: // a positive's destination, and the in-batch negatives it is
		add(q-b, q-b)
		for j := 0; j < k && layout == backend.NegInBatch; j++ {
			i := backend.InBatchOwner(q-b, j, b)
			add(b+i*k+j, i)
		}
	case layout == backend.NegShared: // a shared negative: every positive's
		for i := 0; i < b; i++ {
			add(b+i*k+q-2*b, i)
		}
	default: // a negative of source (q-2·b)/k
		add(b+q-2*b, (q-2*b)/k)
	}
}

// PairLoss is the binary cross-entropy with logits of the live pairs;
// see backend.Link.
func (b *Backend) PairLoss(scores backend.Buffer, n backend.Count, k int, loss, dscores backend.Buffer, correct backend.Count) {
	c, ck := b.checkPairLoss(scores, n, k, loss, dscores, correct)
	defer c.end()
	if !c.ok {
		return
	}
	live, ss, ls, ds, cp := ck.n, ck.scores, ck.loss, ck.dscores, ck.correctP
	pairs := live * (1 + k)
	inv := 1 / float64(max(pairs, 1))
	var sum float64
	hits := 0
	for p, s := range ss[:pairs] {
		l, g, hit := BCE(s, p < live)
		sum += l
		ds[p] = float32(g * inv)
		if hit {
			hits++
		}
	}
	ls[0] = float32(sum * inv)
	*cp = int32(hits)
}

// BCE is the binary cross-entropy with logits of one score: the loss
// (stable: max(s, 0) - s·y + log1p(exp(-|s|))), its gradient
// sigmoid(s) - y, and whether s is on the label's side of 0.
func BCE(s float32, positive bool) (loss, grad float64, hit bool) {
	x := float64(s)
	y := 0.0
	if positive {
		y = 1
	}
	loss = max(x, 0) - x*y + math.Log1p(math.Exp(-math.Abs(x)))
	sig := 1 / (1 + math.Exp(-x))
	if x < 0 {
		e := math.Exp(x)
		sig = e / (1 + e)
	}
	return loss, sig - y, (positive && s > 0) || (!positive && s < 0)
}
