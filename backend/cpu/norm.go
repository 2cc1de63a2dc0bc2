package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// The normalisation ops (backend.Norm). Column statistics are float64 sums
// over the rows in order, one thread per range of columns; row statistics
// one thread per range of rows: the same bits for any thread count.

// rstd is 1/sqrt(v + eps), computed in float64 and rounded once.
func rstd(v float64, eps float32) float32 {
	return float32(1 / math.Sqrt(v+float64(eps)))
}

// BatchNormStats overwrites stats with the column means and biased
// variances of the live rows of x (plus bias, written to pre).
func (b *Backend) BatchNormStats(x backend.Buffer, n backend.Count, dim int, bias, pre, stats backend.Buffer) {
	c, ck := b.checkBatchNormStats(x, n, dim, bias, pre, stats)
	defer c.end()
	if !c.ok {
		return
	}
	rows, xs, st := ck.n, ck.x, ck.stats
	if ck.bias != nil { // the rows plus bias into pre first, as BiasActDropout adds it
		b.rows(rows, max(1, 2048/dim), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				for j, v := range xs[i*dim : (i+1)*dim] {
					ck.pre[i*dim+j] = v + ck.bias[j]
				}
			}
		})
		xs = ck.pre
	}
	b.cols(dim, 16, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			mean, v := columnStats(xs, rows, dim, j)
			st[j], st[dim+j] = float32(mean), float32(v)
		}
	})
}

// columnStats is column j's mean and biased variance over rows [:rows]
// (both 0 without rows) from one pass: float64 sums of d and d², d the
// value less the first row's (so that the squares keep the spread's
// digits), as Norm's doc gives them.
func columnStats(xs []float32, rows, dim, j int) (mean, v float64) {
	if rows == 0 {
		return 0, 0
	}
	k := float64(xs[j])
	var s, q float64
	for i := range rows {
		d := float64(xs[i*dim+j]) - k
		s += d
		q += d * d
	}
	m := s / float64(rows)
	return k + m, max(q/float64(rows)-m*m, 0)
}

// rowStats is a row's mean and biased variance in float64.
func rowStats(row []float32) (mean, v float64) {
	var s float64
	for _, x := range row {
		s += float64(x)
	}
	mean = s / float64(len(row))
	var q float64
	for _, x := range row {
		d := float64(x) - mean
		q += d * d
	}
	return mean, q / float64(len(row))
}

// NormApply normalises the live rows of x into y by the batch's (or
// running) column statistics, or by each row's own, then applies
// BiasActDropout's ReLU and dropout.
func (b *Backend) NormApply(x backend.Buffer, n backend.Count, dim int, perRow bool, stats, gamma, beta backend.Buffer, eps float32, relu bool, p float32, r backend.Rand, mask, y backend.Buffer) {
	c, ck := b.checkNormApply(x, n, dim, perRow, stats, gamma, beta, eps, relu, p, r, mask, y)
	defer c.end()
	if !c.ok {
		return
	}
	rows, xs, st, g, be, ys, ms, keys := ck.n, ck.x, ck.stats, ck.gamma, ck.beta, ck.y, ck.mask, ck.rKeys
	var colR []float32
	if !perRow {
		colR = make([]float32, dim)
		for j := range colR {
			colR[j] = rstd(float64(st[dim+j]), eps)
		}
	}
	thr, scale := rng.DropThreshold(p), 1/(1-p)
	b.rows(rows, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xr, yr := xs[i*dim:(i+1)*dim], ys[i*dim:(i+1)*dim]
			if perRow {
				mean, v := rowStats(xr)
				mu, r := float32(mean), rstd(v, eps)
				for j, xv := range xr {
					yr[j] = reluIf(relu, g[j]*((xv-mu)*r)+be[j])
				}
			} else {
				for j, xv := range xr {
					yr[j] = reluIf(relu, g[j]*((xv-st[j])*colR[j])+be[j])
				}
			}
			dropRowOf(yr, i, relu, ms, keys, ck.r, thr, scale)
		}
	})
}

// NormBackward overwrites dx, dgamma, dbeta (and dbias when set) with the
// gradients of NormApply's training pass, dy passed back through act first.
func (b *Backend) NormBackward(x, dy backend.Buffer, n backend.Count, dim int, perRow bool, stats, gamma backend.Buffer, eps float32, act backend.ActGrad, dx, dgamma, dbeta, dbias backend.Buffer) {
	c, ck := b.checkNormBackward(x, dy, n, dim, perRow, stats, gamma, eps, act, dx, dgamma, dbeta, dbias)
	defer c.end()
	if !c.ok {
		return
	}
	rows, xs, dys, st, g, dxs, dg, db, dbi := ck.n, ck.x, ck.dy, ck.stats, ck.gamma, ck.dx, ck.dgamma, ck.dbeta, ck.dbias
	if act.Relu || act.P > 0 { // the activation's backward first, into dx, which then serves as dy (as with dx = dy)
		y := &buffer{dt: backend.F32, f32: ck.actY}
		b.actBackward(dys, rows, dim, act.Relu, act.P, y, ck.actMask, &buffer{dt: backend.F32, f32: dxs}, nil)
		dys = dxs
	}
	// The means and reciprocal deviations: per column, or per row.
	mu := make([]float32, dim)
	r := make([]float32, dim)
	if perRow {
		mu, r = make([]float32, rows), make([]float32, rows)
		b.rows(rows, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				mean, v := rowStats(xs[i*dim : (i+1)*dim])
				mu[i], r[i] = float32(mean), rstd(v, eps)
			}
		})
	} else {
		for j := range dim {
			mu[j], r[j] = st[j], rstd(float64(st[dim+j]), eps)
		}
	}
	xhat := func(i, j int) float32 {
		if perRow {
			return (xs[i*dim+j] - mu[i]) * r[i]
		}
		return (xs[i*dim+j] - mu[j]) * r[j]
	}
	// dgamma and dbeta first: dx may overwrite dy.
	b.cols(dim, 16, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			var sg, sb float64
			for i := range rows {
				d := float64(dys[i*dim+j])
				sg += d * float64(xhat(i, j))
				sb += d
			}
			dg[j], db[j] = float32(sg), float32(sb)
		}
	})
	if perRow {
		b.rows(rows, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				var s1, s2 float64 // Σ g·dy and Σ g·dy·x̂ over the row
				for j := range dim {
					t := float64(g[j] * dys[i*dim+j])
					s1 += t
					s2 += t * float64(xhat(i, j))
				}
				m1, m2 := float32(s1/float64(dim)), float32(s2/float64(dim))
				for j := range dim {
					dxs[i*dim+j] = r[i] * (g[j]*dys[i*dim+j] - m1 - xhat(i, j)*m2)
				}
			}
		})
	} else if rows > 0 {
		inv := 1 / float32(rows)
		b.cols(dim, 16, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				k := g[j] * r[j]
				mb, mg := db[j]*inv, dg[j]*inv
				for i := range rows {
					dxs[i*dim+j] = k * (dys[i*dim+j] - mb - xhat(i, j)*mg)
				}
			}
		})
	}
	switch {
	case dbi == nil:
	case perRow:
		b.cols(dim, 16, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				var s float64
				for i := range rows {
					s += float64(dxs[i*dim+j])
				}
				dbi[j] = float32(s)
			}
		})
	default:
		clear(dbi) // a column's mean absorbs a bias added before batch normalisation
	}
}

// NormRunning moves the running statistics towards the batch's (its means
// plus bias, when set).
func (b *Backend) NormRunning(stats, bias backend.Buffer, n backend.Count, dim int, momentum float32, running, unless backend.Buffer) {
	c, ck := b.checkNormRunning(stats, bias, n, dim, momentum, running, unless)
	defer c.end()
	rows, st, run, skip := ck.n, ck.stats, ck.running, ck.unless
	if !c.ok || skip || rows < 2 {
		return
	}
	unbias := float32(float64(rows) / float64(rows-1))
	keep := 1 - momentum
	for j := range dim {
		mean := st[j]
		if ck.bias != nil {
			mean += ck.bias[j]
		}
		run[j] = keep*run[j] + momentum*mean
		run[dim+j] = keep*run[dim+j] + momentum*(st[dim+j]*unbias)
	}
}

// NormMoments overwrites moments with the moments of the live rows whose
// statistics are stats.
func (b *Backend) NormMoments(stats backend.Buffer, n backend.Count, dim int, moments backend.Buffer) {
	c, ck := b.checkNormMoments(stats, n, dim, moments)
	defer c.end()
	if !c.ok {
		return
	}
	rows, st, mo := ck.n, ck.stats, ck.moments
	r := float64(rows)
	for j := range dim {
		mu := float64(st[j])
		mo[j] = float32(r * mu)
		mo[dim+j] = float32(r * (float64(st[dim+j]) + mu*mu))
	}
	mo[2*dim] = float32(rows)
}

// NormFromMoments overwrites stats and count from a group's summed
// moments.
func (b *Backend) NormFromMoments(moments backend.Buffer, dim int, stats backend.Buffer, count backend.Count) {
	c, ck := b.checkNormFromMoments(moments, dim, stats, count)
	defer c.end()
	if !c.ok {
		return
	}
	mo, st, p := ck.moments, ck.stats, ck.countP
	total := float64(mo[2*dim])
	for j := range dim {
		st[j], st[dim+j] = 0, 0
		if total > 0 {
			mu := float64(mo[j]) / total
			st[j], st[dim+j] = float32(mu), float32(max(float64(mo[dim+j])/total-mu*mu, 0))
		}
	}
	*p = int32(math.Round(total))
}

// NormBackwardSums overwrites sums with Σ dy·x̂, Σ dy over the live rows
// and their count.
func (b *Backend) NormBackwardSums(x, dy backend.Buffer, n backend.Count, dim int, stats backend.Buffer, eps float32, sums backend.Buffer) {
	c, ck := b.checkNormBackwardSums(x, dy, n, dim, stats, eps, sums)
	defer c.end()
	if !c.ok {
		return
	}
	rows, xs, dys, st, su := ck.n, ck.x, ck.dy, ck.stats, ck.sums
	b.cols(dim, 16, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			mu, r := st[j], rstd(float64(st[dim+j]), eps)
			var sg, sb float64
			for i := range rows {
				d := float64(dys[i*dim+j])
				sg += d * float64((xs[i*dim+j]-mu)*r)
				sb += d
			}
			su[j], su[dim+j] = float32(sg), float32(sb)
		}
	})
	su[2*dim] = float32(rows)
}

// NormBackwardApply overwrites dx (and dbias) from a group's summed
// backward sums.
func (b *Backend) NormBackwardApply(x, dy backend.Buffer, n backend.Count, dim int, stats, gamma backend.Buffer, eps float32, sums, dx, dbias backend.Buffer) {
	c, ck := b.checkNormBackwardApply(x, dy, n, dim, stats, gamma, eps, sums, dx, dbias)
	defer c.end()
	if !c.ok {
		return
	}
	rows, xs, dys, st, g, su, dxs, dbi := ck.n, ck.x, ck.dy, ck.stats, ck.gamma, ck.sums, ck.dx, ck.dbias
	var inv float32
	if su[2*dim] > 0 {
		inv = 1 / su[2*dim]
	}
	b.cols(dim, 16, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			mu, r := st[j], rstd(float64(st[dim+j]), eps)
			k, mb, mg := g[j]*r, su[dim+j]*inv, su[j]*inv
			var s float64
			for i := range rows {
				v := k * (dys[i*dim+j] - mb - ((xs[i*dim+j]-mu)*r)*mg)
				dxs[i*dim+j] = v
				s += float64(v)
			}
			if dbi != nil {
				dbi[j] = float32(s)
			}
		}
	})
}
