package backendtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
)

// testNormShapes: batch normalisation's column statistics and sums over
// many rows (50,000 of 256 columns: the GPU splits the rows into chunks as
// well as the columns) and odd shapes (one column, 33 columns, no live
// row, a count one row into a chunk), against float64 references, with
// the same bits on a second call.
func testNormShapes(e *env) {
	for _, s := range []struct{ rows, live, dim int }{
		{50003, 50000, 256}, {4100, 4097, 33}, {700, 129, 1}, {1000, 0, 37}, {20000, 19999, 3},
	} {
		e.normShape(s.rows, s.live, s.dim)
	}
	for _, s := range []struct{ rows, live, dim int }{{4100, 4097, 33}, {700, 129, 1}, {3000, 2049, 130}} {
		e.normShapeFull(s.rows, s.live, s.dim)
	}
}

// normShape checks BatchNormStats and batch NormBackward's dgamma, dbeta
// and dbias on one shape, computing the references column by column
// (no [rows, dim] float64 copies), and that a second call gives the same
// bits.
func (e *env) normShape(rows, live, dim int) {
	name := fmt.Sprintf("norm %d of %d rows x %d", live, rows, dim)
	c := e.normCase(rows, live, dim)
	nb := e.norm()
	n := e.count(live, rows)
	xb := e.upload(c.x)
	stats := e.poison(2 * dim)
	nb.BatchNormStats(xb, n, dim, nil, nil, stats)
	got := e.readF32(stats, 2*dim)
	mu, v := c.refStats(false)
	if live == 0 { // no rows: zero statistics (backend.Norm)
		mu, v = make([]float64, dim), make([]float64, dim)
	}
	e.checkClose(name+": BatchNormStats", got, append(slices.Clone(mu), v...), nil, tolSum, dim)
	again := e.poison(2 * dim)
	nb.BatchNormStats(xb, n, dim, nil, nil, again)
	checkEqual(e.t, name+": BatchNormStats again", e.readF32(again, 2*dim), got, 0)

	dy := e.randF32(rows*dim, 1)
	dyb, gamma := e.upload(dy), e.upload(c.gamma)
	dg, db, dbias := e.poison(dim), e.poison(dim), e.poison(dim)
	dx := e.poison(rows * dim)
	nb.NormBackward(xb, dyb, n, dim, false, stats, gamma, normEps, backend.ActGrad{}, dx, dg, db, dbias)
	wantDg, wantDb, wantBias := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	r := make([]float64, dim)
	for j := range dim {
		r[j] = 1 / math.Sqrt(v[j]+normEps)
	}
	for i := range live {
		for j := range dim {
			t := i*dim + j
			wantDg[j] += float64(dy[t]) * (float64(c.x[t]) - mu[j]) * r[j]
			wantDb[j] += float64(dy[t])
		}
	}
	for i := range live {
		for j := range dim {
			t := i*dim + j
			xh := (float64(c.x[t]) - mu[j]) * r[j]
			wantBias[j] += float64(c.gamma[j]) * r[j] * (float64(dy[t]) - wantDb[j]/float64(live) - xh*wantDg[j]/float64(live))
		}
	}
	scale := absSum(live, dim, dy)
	gotDg := e.readF32(dg, dim)
	e.checkClose(name+": NormBackward dgamma", gotDg, wantDg, scale, tolSum, 0)
	e.checkClose(name+": NormBackward dbeta", e.readF32(db, dim), wantDb, scale, tolSum, 0)
	biasScale := make([]float64, dim)
	for j := range dim {
		biasScale[j] = scale[j] * 3 * math.Abs(float64(c.gamma[j])) * r[j] // |dy| + |mean dy| + |x̂ mean dy x̂| per row
	}
	e.checkClose(name+": NormBackward dbias", e.readF32(dbias, dim), wantBias, biasScale, tolSum, 0)
	dg2 := e.poison(dim)
	nb.NormBackward(xb, dyb, n, dim, false, stats, gamma, normEps, backend.ActGrad{}, e.poison(rows*dim), dg2, e.poison(dim), nil)
	checkEqual(e.t, name+": NormBackward dgamma again", e.readF32(dg2, dim), gotDg, 0)

	su := e.poison(2*dim + 1)
	nb.NormBackwardSums(xb, dyb, n, dim, stats, normEps, su)
	sums := e.readF32(su, 2*dim+1)
	e.checkClose(name+": NormBackwardSums", sums[:2*dim], append(slices.Clone(wantDg), wantDb...), append(slices.Clone(scale), scale...), tolSum, dim)
	if sums[2*dim] != float32(live) {
		e.t.Errorf("%s: NormBackwardSums count %v, want %d", name, sums[2*dim], live)
	}
}

// normShapeFull checks every output of NormBackward, batch and per row, on
// a shape small enough for the float64 references of every element.
func (e *env) normShapeFull(rows, live, dim int) {
	c := e.normCase(rows, live, dim)
	nb := e.norm()
	n := e.count(live, rows)
	xb := e.upload(c.x)
	for _, perRow := range []bool{false, true} {
		name := fmt.Sprintf("norm %d of %d rows x %d (per row %v)", live, rows, dim, perRow)
		stats := e.poison(2 * dim)
		if !perRow {
			nb.BatchNormStats(xb, n, dim, nil, nil, stats)
		}
		dy := e.randF32(rows*dim, 1)
		dx, dg, db, dbias := e.poison(rows*dim), e.poison(dim), e.poison(dim), e.poison(dim)
		nb.NormBackward(xb, e.upload(dy), n, dim, perRow, stats, e.upload(c.gamma), normEps, backend.ActGrad{}, dx, dg, db, dbias)
		wantDx, wantDg, wantDb, wantBias, scale := c.refBackward(dy, perRow)
		e.checkClose(name+": dx", e.readF32(dx, live*dim), wantDx, scale, tolSum, dim)
		e.checkClose(name+": dgamma", e.readF32(dg, dim), wantDg, absSum(live, dim, dy), tolSum, 0)
		e.checkClose(name+": dbeta", e.readF32(db, dim), wantDb, absSum(live, dim, dy), tolSum, 0)
		e.checkClose(name+": dbias", e.readF32(dbias, dim), wantBias, colAbsSum(live, dim, scale), tolSum, 0)
	}
}

// colAbsSum is Σ_i |a[i, j]| of a float64 [live, dim], per column, plus 1e-3.
func colAbsSum(live, dim int, a []float64) []float64 {
	s := make([]float64, dim)
	for i := range live * dim {
		s[i%dim] += math.Abs(a[i])
	}
	for j := range s {
		s[j] += 1e-3
	}
	return s
}
