package backendtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
)

// norm is the backend's normalisation ops (backend.Norm).
func (e *env) norm() backend.Norm { return capability(e, backend.NormOf) }

// normCase is the input of a normalisation test: x [cap, dim] with live
// rows, the rows past them NaN (they must not be read), and gamma, beta.
type normCase struct {
	rows, live, dim int
	x, gamma, beta  []float32
}

const normEps = 1e-5

func (e *env) normCase(rows, live, dim int) normCase {
	c := normCase{rows: rows, live: live, dim: dim}
	c.x = e.randF32(rows*dim, 3)
	for i := range live * dim {
		c.x[i] += float32(i%dim) * 0.5 // columns of different means
	}
	for i := live * dim; i < rows*dim; i++ {
		c.x[i] = float32(math.NaN())
	}
	c.gamma, c.beta = e.randF32(dim, 1), e.randF32(dim, 1)
	return c
}

// refStats is the float64 mean and biased variance of each column (perRow
// false; dim entries) or row (perRow true; live entries).
func (c normCase) refStats(perRow bool) (mu, v []float64) {
	n, m := c.dim, c.live // statistics, and the values each is over
	at := func(k, t int) float64 { return float64(c.x[t*c.dim+k]) }
	if perRow {
		n, m = c.live, c.dim
		at = func(k, t int) float64 { return float64(c.x[k*c.dim+t]) }
	}
	mu, v = make([]float64, n), make([]float64, n)
	for k := range n {
		for t := range m {
			mu[k] += at(k, t)
		}
		mu[k] /= float64(m)
		for t := range m {
			d := at(k, t) - mu[k]
			v[k] += d * d
		}
		v[k] /= float64(m)
	}
	return mu, v
}

// refXhat is the normalised x in float64, [live, dim].
func (c normCase) refXhat(perRow bool) []float64 {
	mu, v := c.refStats(perRow)
	out := make([]float64, c.live*c.dim)
	for i := range c.live {
		for j := range c.dim {
			k := j
			if perRow {
				k = i
			}
			out[i*c.dim+j] = (float64(c.x[i*c.dim+j]) - mu[k]) / math.Sqrt(v[k]+normEps)
		}
	}
	return out
}

// testBatchNormStats: column means and biased variances of the live rows,
// also of columns whose mean is 10⁴ times their spread (the one-pass sums
// must keep the variance's digits), and zeros without live rows.
func testBatchNormStats(e *env) {
	for _, offset := range []float32{0, 3e4} {
		c := e.normCase(40, 29, 11)
		for i := range c.live * c.dim {
			c.x[i] += offset
		}
		stats := e.poison(2 * c.dim)
		e.norm().BatchNormStats(e.upload(c.x), e.count(c.live, c.rows), c.dim, nil, nil, stats)
		mu, v := c.refStats(false)
		e.checkClose(fmt.Sprintf("BatchNormStats, offset %g", offset), e.readF32(stats, 2*c.dim), append(mu, v...), nil, tolSum, c.dim)
	}
	c := e.normCase(8, 0, 5)
	stats := e.poison(2 * c.dim)
	e.norm().BatchNormStats(e.upload(c.x), e.count(0, c.rows), c.dim, nil, nil, stats)
	for j, s := range e.readF32(stats, 2*c.dim) {
		if s != 0 {
			e.t.Errorf("BatchNormStats without live rows: stats[%d] = %v, want 0", j, s)
		}
	}
}

// testNormApply: batch statistics (given) and row statistics (the op's
// own), scaled and shifted, live rows only.
func testNormApply(e *env) {
	for _, perRow := range []bool{false, true} {
		c := e.normCase(40, 29, 11)
		mu, v := c.refStats(false)
		st := make([]float32, 2*c.dim)
		for j := range c.dim {
			st[j], st[c.dim+j] = float32(mu[j]), float32(v[j])
		}
		y := e.poison(c.rows * c.dim)
		e.norm().NormApply(e.upload(c.x), e.count(c.live, c.rows), c.dim, perRow, e.upload(st),
			e.upload(c.gamma), e.upload(c.beta), normEps, false, 0, backend.Rand{}, nil, y)
		xh := c.refXhat(perRow)
		want, scale := make([]float64, len(xh)), make([]float64, len(xh))
		for i, h := range xh {
			j := i % c.dim
			want[i] = float64(c.gamma[j])*h + float64(c.beta[j])
			scale[i] = math.Abs(float64(c.gamma[j])*h) + math.Abs(float64(c.beta[j])) + 1e-3
		}
		name := "NormApply (batch)"
		if perRow {
			name = "NormApply (row)"
		}
		e.checkClose(name, e.readF32(y, c.live*c.dim), want, scale, tolSum, c.dim)
	}
}

// testNormApplyAct: NormApply with ReLU and dropout writes what NormApply
// without them, then BiasActDropout (no bias) on its output, write: the
// same bits and the same mask, batch and row statistics, four-wide rows
// and others, keyed by row and by given keys.
func testNormApplyAct(e *env) {
	for _, c := range []struct {
		perRow, relu bool
		p            float32
		dim          int
		keys         bool
	}{{false, true, 0, 12, false}, {false, true, 0.3, 12, true}, {true, true, 0.5, 11, false}, {false, false, 0.2, 7, true}} {
		nc := e.normCase(40, 29, c.dim)
		n := e.count(nc.live, nc.rows)
		xb, gb, bb := e.upload(nc.x), e.upload(nc.gamma), e.upload(nc.beta)
		stats := e.poison(2 * c.dim)
		e.norm().BatchNormStats(xb, n, c.dim, nil, nil, stats)
		r := e.rand(7, 3, 1, 2)
		if c.keys {
			keys := make([]int32, nc.rows)
			for i := range keys {
				keys[i] = int32(1000 + 7*i)
			}
			r.Keys = e.upload(keys)
		}
		var mask, wantMask backend.Buffer
		if c.p > 0 {
			mask, wantMask = e.alloc(backend.U8, nc.rows*c.dim, 7), e.alloc(backend.U8, nc.rows*c.dim, 7)
		}
		got, plain, want := e.poison(nc.rows*c.dim), e.poison(nc.rows*c.dim), e.poison(nc.rows*c.dim)
		e.norm().NormApply(xb, n, c.dim, c.perRow, stats, gb, bb, normEps, c.relu, c.p, r, mask, got)
		e.norm().NormApply(xb, n, c.dim, c.perRow, stats, gb, bb, normEps, false, 0, backend.Rand{}, nil, plain)
		e.be.BiasActDropout(plain, n, c.dim, nil, c.relu, c.p, r, wantMask, want)
		name := fmt.Sprintf("NormApply perRow %v relu %v p %g dim %d keys %v", c.perRow, c.relu, c.p, c.dim, c.keys)
		live := nc.live * c.dim
		if g, w := e.readF32(got, live), e.readF32(want, live); !slices.Equal(g, w) {
			e.t.Errorf("%s: differs from NormApply then BiasActDropout", name)
		}
		if c.p > 0 && !slices.Equal(e.readU8(mask, live), e.readU8(wantMask, live)) {
			e.t.Errorf("%s: its mask differs from BiasActDropout's", name)
		}
	}
}

// testNormBackward: the gradients of a training pass against float64
// formulas, dx over dy in place, dbias the column sums of dx.
func testNormBackward(e *env) {
	for _, perRow := range []bool{false, true} {
		c := e.normCase(40, 29, 11)
		n := e.count(c.live, c.rows)
		xb := e.upload(c.x)
		stats := e.poison(2 * c.dim)
		if !perRow {
			e.norm().BatchNormStats(xb, n, c.dim, nil, nil, stats)
		}
		dy := e.randF32(c.rows*c.dim, 1)
		dyb := e.upload(dy)
		dg, db, dbias := e.poison(c.dim), e.poison(c.dim), e.poison(c.dim)
		e.norm().NormBackward(xb, dyb, n, c.dim, perRow, stats, e.upload(c.gamma), normEps, backend.ActGrad{}, dyb, dg, db, dbias)
		wantDx, wantDg, wantDb, wantBias, scale := c.refBackward(dy, perRow)
		name := map[bool]string{false: "NormBackward (batch)", true: "NormBackward (row)"}[perRow]
		e.checkClose(name+" dx", e.readF32(dyb, c.live*c.dim), wantDx, scale, tolSum, c.dim)
		e.checkClose(name+" dgamma", e.readF32(dg, c.dim), wantDg, absSum(c.live, c.dim, dy), tolSum, 0)
		e.checkClose(name+" dbeta", e.readF32(db, c.dim), wantDb, absSum(c.live, c.dim, dy), tolSum, 0)
		gotBias := e.readF32(dbias, c.dim)
		e.checkClose(name+" dbias", gotBias, wantBias, absSum(c.live, c.dim, dy), tolSum, 0)
		if !perRow && slices.ContainsFunc(gotBias, func(v float32) bool { return v != 0 }) {
			e.t.Errorf("%s: dbias %v, want exactly 0 (a column's mean absorbs the bias)", name, gotBias)
		}
	}
}

// absSum is Σ_i |a[i, j]| over the live rows, per column, plus 1e-3.
func absSum(live, dim int, a []float32) []float64 {
	s := make([]float64, dim)
	for i := range live * dim {
		s[i%dim] += math.Abs(float64(a[i]))
	}
	for j := range s {
		s[j] += 1e-3
	}
	return s
}

// refBackward is the training pass's gradients in float64: dx, dgamma,
// dbeta, the column sums of dx, and a scale for dx (the terms' sizes).
func (c normCase) refBackward(dy []float32, perRow bool) (dx, dg, db, dbias, scale []float64) {
	xh := c.refXhat(perRow)
	_, v := c.refStats(perRow)
	d, L := c.dim, c.live
	dx, scale = make([]float64, L*d), make([]float64, L*d)
	dg, db, dbias = make([]float64, d), make([]float64, d), make([]float64, d)
	for i := range L {
		for j := range d {
			dg[j] += float64(dy[i*d+j]) * xh[i*d+j]
			db[j] += float64(dy[i*d+j])
		}
	}
	if perRow {
		for i := range L {
			var m1, m2 float64
			for j := range d {
				g := float64(c.gamma[j]) * float64(dy[i*d+j])
				m1 += g
				m2 += g * xh[i*d+j]
			}
			m1, m2 = m1/float64(d), m2/float64(d)
			r := 1 / math.Sqrt(v[i]+normEps)
			for j := range d {
				g := float64(c.gamma[j]) * float64(dy[i*d+j])
				dx[i*d+j] = r * (g - m1 - xh[i*d+j]*m2)
				scale[i*d+j] = r * (math.Abs(g) + math.Abs(m1) + math.Abs(xh[i*d+j]*m2) + 1e-3)
			}
		}
	} else {
		for j := range d {
			r := float64(c.gamma[j]) / math.Sqrt(v[j]+normEps)
			for i := range L {
				t := float64(dy[i*d+j]) - db[j]/float64(L) - xh[i*d+j]*dg[j]/float64(L)
				dx[i*d+j] = r * t
				scale[i*d+j] = math.Abs(r) * (math.Abs(float64(dy[i*d+j])) + math.Abs(db[j]/float64(L)) + math.Abs(xh[i*d+j]*dg[j]/float64(L)) + 1e-3)
			}
		}
	}
	for i := range L * d {
		dbias[i%d] += dx[i]
	}
	return dx, dg, db, dbias, scale
}

// testNormRunning: the running statistics move by the momentum towards
// the batch's (variance made unbiased; with a bias, the means plus it),
// and not at all while the skip flag is set or with fewer than two live
// rows.
func testNormRunning(e *env) {
	const dim, live, momentum = 7, 9, 0.1
	batch, run0, bias := e.randF32(2*dim, 1), e.randF32(2*dim, 1), e.randF32(dim, 1)
	for j := dim; j < 2*dim; j++ {
		batch[j], run0[j] = float32(math.Abs(float64(batch[j]))), float32(math.Abs(float64(run0[j])))
	}
	for _, withBias := range []bool{false, true} {
		want := make([]float64, 2*dim)
		var bb backend.Buffer
		for j := range dim {
			mean := float64(batch[j])
			if withBias {
				mean += float64(bias[j])
			}
			want[j] = (1-momentum)*float64(run0[j]) + momentum*mean
			want[dim+j] = (1-momentum)*float64(run0[dim+j]) + momentum*float64(batch[dim+j])*live/(live-1)
		}
		if withBias {
			bb = e.upload(bias)
		}
		rb, sb := e.upload(run0), e.upload(batch)
		e.norm().NormRunning(sb, bb, e.count(2, 30), dim, momentum, rb, e.upload([]int32{1}))
		e.norm().NormRunning(sb, bb, e.count(1, 30), dim, momentum, rb, nil)
		checkEqual(e.t, "NormRunning skipped", e.readF32(rb, 2*dim), run0, 0)
		e.norm().NormRunning(sb, bb, e.count(live, 30), dim, momentum, rb, e.upload([]int32{0}))
		e.checkClose(fmt.Sprintf("NormRunning (bias %t)", withBias), e.readF32(rb, 2*dim), want, nil, tolElem, 0)
	}
}

// testNormSync: a batch split over two ranks, each rank's statistics
// turned into moments and the moments summed, gives back the whole
// batch's statistics and count; the backward sums split the same way,
// summed, give NormBackwardApply the whole batch's dx on each rank's rows,
// and a lone rank's sums give NormBackward's dx.
func testNormSync(e *env) {
	c := e.normCase(40, 29, 11)
	const cut = 12 // rank 0: rows [0, 12); rank 1: rows [12, 29)
	d := c.dim
	nb := e.norm()
	part := func(lo, hi int) (backend.Buffer, backend.Count) {
		rows := make([]float32, (hi-lo)*d)
		copy(rows, c.x[lo*d:hi*d])
		return e.upload(rows), e.count(hi-lo, hi-lo)
	}
	x0, n0 := part(0, cut)
	x1, n1 := part(cut, c.live)
	sum := make([]float32, 2*d+1)
	for _, r := range []struct {
		x backend.Buffer
		n backend.Count
	}{{x0, n0}, {x1, n1}} {
		st, mo := e.poison(2*d), e.poison(2*d+1)
		nb.BatchNormStats(r.x, r.n, d, nil, nil, st)
		nb.NormMoments(st, r.n, d, mo)
		for i, v := range e.readF32(mo, 2*d+1) {
			sum[i] += v
		}
	}
	stats, count := e.poison(2*d), e.count(0, 1<<20)
	nb.NormFromMoments(e.upload(sum), d, stats, count)
	mu, v := c.refStats(false)
	e.checkClose("NormFromMoments", e.readF32(stats, 2*d), append(mu, v...), nil, 1e-4, d)
	if got := e.readCount(count); got != c.live {
		e.t.Errorf("NormFromMoments count %d, want %d", got, c.live)
	}

	dy := e.randF32(c.rows*d, 1)
	gamma := e.upload(c.gamma)
	wantDx, _, _, wantBias, scale := c.refBackward(dy, false)
	bsum := make([]float32, 2*d+1)
	dys := []backend.Buffer{e.upload(dy[:cut*d]), e.upload(dy[cut*d : c.live*d])}
	xs, ns := []backend.Buffer{x0, x1}, []backend.Count{n0, n1}
	for r := range 2 {
		su := e.poison(2*d + 1)
		nb.NormBackwardSums(xs[r], dys[r], ns[r], d, stats, normEps, su)
		for i, s := range e.readF32(su, 2*d+1) {
			bsum[i] += s
		}
	}
	got := make([]float32, 0, c.live*d)
	bias := make([]float64, d)
	for r := range 2 {
		dx, db := e.poison(ns[r].Cap*d), e.poison(d)
		nb.NormBackwardApply(xs[r], dys[r], ns[r], d, stats, gamma, normEps, e.upload(bsum), dx, db)
		got = append(got, e.readF32(dx, ns[r].Cap*d)...)
		for j, s := range e.readF32(db, d) {
			bias[j] += float64(s)
		}
	}
	e.checkClose("NormBackwardApply dx", got, wantDx, scale, tolSum, d)
	e.checkClose("NormBackwardApply dbias", f32(bias), wantBias, absSum(c.live, d, dy), tolSum, 0)

	// One rank alone: the same dx as NormBackward's.
	n := e.count(c.live, c.rows)
	xb, dyb := e.upload(c.x), e.upload(dy)
	one, su := e.poison(c.rows*d), e.poison(2*d+1)
	nb.BatchNormStats(xb, n, d, nil, nil, stats)
	nb.NormBackwardSums(xb, dyb, n, d, stats, normEps, su)
	nb.NormBackwardApply(xb, dyb, n, d, stats, gamma, normEps, su, one, nil)
	fused := e.poison(c.rows * d)
	nb.NormBackward(xb, dyb, n, d, false, stats, gamma, normEps, backend.ActGrad{}, fused, e.poison(d), e.poison(d), nil)
	e.checkClose("NormBackwardApply alone", e.readF32(one, c.live*d), f64(e.readF32(fused, c.live*d)), scale, tolSum, d)
}

// f32 narrows a float64 slice.
func f32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}
