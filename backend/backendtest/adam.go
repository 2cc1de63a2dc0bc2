package backendtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
)

// adamState is a table and its moments on the host: [rows, dim] each.
type adamState struct {
	p, m, v []float32
	dim     int
}

// randAdamState draws a table and moments as testAdam does (v squared, so
// non-negative).
func (e *env) randAdamState(rows, dim int) adamState {
	s := adamState{p: e.randF32(rows*dim, 1), m: e.randF32(rows*dim, 0.05), v: e.randF32(rows*dim, 0.01), dim: dim}
	for i := range s.v {
		s.v[i] *= s.v[i]
	}
	return s
}

// randAdamInputs draws a dense parameter of n elements, its gradient and
// its moments (v squared, so non-negative), in that order.
func (e *env) randAdamInputs(n int) (p, g, m, v []float32) {
	p, g, m, v = e.randF32(n, 1), e.randF32(n, 0.1), e.randF32(n, 0.05), e.randF32(n, 0.01)
	for i := range v {
		v[i] *= v[i]
	}
	return p, g, m, v
}

// rows returns rows ids of x (of s's width) one after the other.
func (s adamState) rows(x []float32, ids []int32) []float32 {
	return gatherRef(x, ids, s.dim)
}

// upload returns s's arrays in backend buffers.
func (s adamState) upload(e *env) (p, m, v backend.Buffer) {
	return e.upload(s.p), e.upload(s.m), e.upload(s.v)
}

// read returns the arrays of buffers p, m, v of s's size.
func (s adamState) read(e *env, p, m, v backend.Buffer) adamState {
	n := len(s.p)
	return adamState{p: e.readF32(p, n), m: e.readF32(m, n), v: e.readF32(v, n), dim: s.dim}
}

// adamConfigs are the Adam tests' configurations (the second with weight
// decay).
func adamConfigs() []backend.AdamConfig {
	return []backend.AdamConfig{
		{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
		{LR: 0.003, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 5e-4},
	}
}

// testSparseAdam: the named rows of the table and its moments take the
// step of Adam's float64 reference, and equal bit for bit this backend's
// Adam over those rows alone; every other row and its moments stay as they
// were (lazy Adam), and so does the gradient. Live rows below capacity,
// with the ids and gradient rows past them unreadable (an id past the
// table, NaNs); widths on both sides of a warp.
func testSparseAdam(e *env) {
	const rows, live, capN = 40, 17, 20
	for ci, cfg := range adamConfigs() {
		for _, dim := range []int{1, 5, 33} {
			step := 1 + 6*ci
			name := fmt.Sprintf("SparseAdam config %d dim %d step %d", ci, dim, step)
			s := e.randAdamState(rows, dim)
			ids := e.distinctIDs(live, capN, rows)
			grad := append(e.randF32(live*dim, 0.1), slices.Repeat([]float32{float32(math.NaN())}, (capN-live)*dim)...)
			pb, mb, vb := s.upload(e)
			gb := e.upload(grad)
			e.be.SparseAdam(pb, mb, vb, dim, e.upload(ids), e.count(live, capN), gb, e.count(step, 0), cfg)
			got := s.read(e, pb, mb, vb)

			named, g := ids[:live], grad[:live*dim]
			wp, wm, wv, sp, sm := adamRef(s.rows(s.p, named), g, s.rows(s.m, named), s.rows(s.v, named), step, cfg)
			e.checkClose(name+" named rows", s.rows(got.p, named), wp, sp, tolElem, dim)
			e.checkClose(name+" named rows' m", s.rows(got.m, named), wm, sm, tolElem, dim)
			e.checkClose(name+" named rows' v", s.rows(got.v, named), wv, nil, tolElem, dim)

			dense := adamState{p: s.rows(s.p, named), m: s.rows(s.m, named), v: s.rows(s.v, named), dim: dim}
			dp, dm, dv := dense.upload(e)
			e.be.Adam(dp, e.upload(g), dm, dv, e.count(step, 0), cfg)
			want := dense.read(e, dp, dm, dv)
			checkEqual(e.t, name+" named rows = Adam's", s.rows(got.p, named), want.p, dim)
			checkEqual(e.t, name+" named rows' m = Adam's", s.rows(got.m, named), want.m, dim)
			checkEqual(e.t, name+" named rows' v = Adam's", s.rows(got.v, named), want.v, dim)

			var others []int32
			for r := range int32(rows) {
				if !slices.Contains(named, r) {
					others = append(others, r)
				}
			}
			checkEqual(e.t, name+" other rows unchanged", s.rows(got.p, others), s.rows(s.p, others), dim)
			checkEqual(e.t, name+" other rows' m unchanged", s.rows(got.m, others), s.rows(s.m, others), dim)
			checkEqual(e.t, name+" other rows' v unchanged", s.rows(got.v, others), s.rows(s.v, others), dim)
			checkEqual(e.t, name+" grad unchanged", e.readF32(gb, live*dim), g, dim)
		}
	}
}

// testSparseAdamAll: with every row named (in a shuffled order), SparseAdam
// is Adam over the whole table with each row's gradient in its place, bit
// for bit.
func testSparseAdamAll(e *env) {
	const rows, dim, step = 30, 7, 3
	cfg := adamConfigs()[1]
	s := e.randAdamState(rows, dim)
	ids := e.distinctIDs(rows, rows, rows)
	grad := e.randF32(rows*dim, 0.1)
	placed := make([]float32, rows*dim)
	for i, id := range ids {
		copy(placed[int(id)*dim:], grad[i*dim:(i+1)*dim])
	}
	pb, mb, vb := s.upload(e)
	e.be.SparseAdam(pb, mb, vb, dim, e.upload(ids), e.count(rows, rows), e.upload(grad), e.count(step, 0), cfg)
	got := s.read(e, pb, mb, vb)
	dp, dm, dv := s.upload(e)
	e.be.Adam(dp, e.upload(placed), dm, dv, e.count(step, 0), cfg)
	want := s.read(e, dp, dm, dv)
	checkEqual(e.t, "SparseAdam of every row = Adam: table", got.p, want.p, dim)
	checkEqual(e.t, "SparseAdam of every row = Adam: m", got.m, want.m, dim)
	checkEqual(e.t, "SparseAdam of every row = Adam: v", got.v, want.v, dim)
}

// testSparseAdamSkip: while cfg.Skip is set nothing changes (a step of 0
// is not an error then); once it is clear the named rows are stepped.
func testSparseAdamSkip(e *env) {
	const rows, dim, live = 12, 4, 5
	cfg := adamConfigs()[0]
	cfg.Skip = e.upload([]int32{1, 0})
	s := e.randAdamState(rows, dim)
	ids := e.distinctIDs(live, live, rows)
	grad := e.randF32(live*dim, 0.1)
	pb, mb, vb := s.upload(e)
	idb, gb := e.upload(ids), e.upload(grad)
	for _, step := range []int{0, 3} {
		e.be.SparseAdam(pb, mb, vb, dim, idb, e.count(live, live), gb, e.count(step, 0), cfg)
		got := s.read(e, pb, mb, vb)
		name := fmt.Sprintf("SparseAdam skipped at step %d", step)
		checkEqual(e.t, name+": table", got.p, s.p, dim)
		checkEqual(e.t, name+": m", got.m, s.m, dim)
		checkEqual(e.t, name+": v", got.v, s.v, dim)
	}
	e.be.Write(cfg.Skip, 0, []int32{0})
	e.be.SparseAdam(pb, mb, vb, dim, idb, e.count(live, live), gb, e.count(3, 0), cfg)
	got := s.read(e, pb, mb, vb)
	wp, _, _, sp, _ := adamRef(s.rows(s.p, ids), grad, s.rows(s.m, ids), s.rows(s.v, ids), 3, cfg)
	e.checkClose("SparseAdam with a clear Skip", s.rows(got.p, ids), wp, sp, tolElem, dim)
}

// testAdamLRScale: a learning-rate factor in backend memory (cfg.LRScale)
// steps Adam and SparseAdam exactly as the learning rate multiplied by it
// (a float32 product), bit for bit, and a factor of 0 leaves the
// parameters where they were while the moments still move.
func testAdamLRScale(e *env) {
	const n, rows, dim, step = 300, 12, 5, 4
	base := adamConfigs()[1]
	for _, f := range []float32{0.25, 0, 1.5} {
		name := fmt.Sprintf("Adam LRScale %g", f)
		scaled, plain := base, base
		scaled.LRScale = e.upload([]float32{f})
		plain.LR = base.LR * f
		p, g, m, v := e.randAdamInputs(n)
		run := func(cfg backend.AdamConfig) (pg, mg []float32) {
			pb, mb := e.upload(slices.Clone(p)), e.upload(slices.Clone(m))
			e.be.Adam(pb, e.upload(g), mb, e.upload(slices.Clone(v)), e.count(step, 0), cfg)
			return e.readF32(pb, n), e.readF32(mb, n)
		}
		gotP, gotM := run(scaled)
		wantP, wantM := run(plain)
		checkEqual(e.t, name+" parameters = Adam at LR×factor", gotP, wantP, n)
		checkEqual(e.t, name+" moments = Adam at LR×factor", gotM, wantM, n)
		if f == 0 {
			checkEqual(e.t, name+" parameters unchanged", gotP, p, n)
			if slices.Equal(gotM, m) {
				e.t.Errorf("%s: the first moments did not move", name)
			}
		}

		s := e.randAdamState(rows, dim)
		ids := e.distinctIDs(rows/2, rows/2, rows)
		grad := e.randF32(rows/2*dim, 0.1)
		sparse := func(cfg backend.AdamConfig) adamState {
			pb, mb, vb := s.upload(e)
			e.be.SparseAdam(pb, mb, vb, dim, e.upload(ids), e.count(rows/2, rows/2), e.upload(grad), e.count(step, 0), cfg)
			return s.read(e, pb, mb, vb)
		}
		checkEqual(e.t, "Sparse"+name+" table = SparseAdam at LR×factor", sparse(scaled).p, sparse(plain).p, dim)
	}
}
