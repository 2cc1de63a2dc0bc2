package backendtest

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// link is the backend's link-prediction ops (backend.Link).
func (e *env) link() backend.Link { return capability(e, backend.LinkOf) }

// linkLayout is a batch of b live positives (capacity bCap) with k
// negatives each in layout: positions and pairs as backend.Link lays them
// out, written here from the description.
type linkLayout struct{ b, bCap, k, layout int }

func (l linkLayout) ends() int {
	switch l.layout {
	case backend.NegShared:
		return 2*l.b + l.k
	case backend.NegInBatch:
		return 2 * l.b
	}
	return l.b * (2 + l.k)
}

func (l linkLayout) pairs() int { return l.b * (1 + l.k) }

// pair is the positions of pair p.
func (l linkLayout) pair(p int) (a, c int) {
	if p < l.b {
		return p, l.b + p
	}
	i, j := (p-l.b)/l.k, (p-l.b)%l.k
	switch l.layout {
	case backend.NegShared:
		return i, 2*l.b + j
	case backend.NegInBatch: // the other positives' destinations, cycling
		return i, l.b + (i+1+j%max(l.b-1, 1))%l.b
	}
	return i, 2*l.b + i*l.k + j
}

// edgeSeedsCase is EdgeSeeds's input: edges over nodes vertices, live of
// bCap edge ids, and cumulative degrees with empty vertices.
type edgeSeedsCase struct {
	pairs, ids, dist  []int32
	nodes, live, bCap int
}

func (e *env) edgeSeedsCase() edgeSeedsCase {
	const edges, nodes, bCap, live = 50, 37, 12, 9
	c := edgeSeedsCase{pairs: make([]int32, 2*edges), ids: make([]int32, bCap), dist: make([]int32, nodes+1),
		nodes: nodes, live: live, bCap: bCap}
	for i := range c.pairs {
		c.pairs[i] = int32(e.rnd.IntN(nodes))
	}
	for i := range c.ids {
		c.ids[i] = int32(e.rnd.IntN(edges))
	}
	for v := range nodes {
		d := int32(e.rnd.IntN(6))
		if v%5 == 0 {
			d = 0
		}
		c.dist[v+1] = c.dist[v] + d
	}
	return c
}

// testEdgeSeeds: the ends of live edge ids, and negatives drawn from the
// Philox words of each edge id (NegOwn) or of the step (NegShared), or
// none (NegInBatch), uniform and by degree (a cumulative degree table
// with empty vertices, which are never drawn); counts written, ends past
// the live ones untouched.
func testEdgeSeeds(e *env) {
	c := e.edgeSeedsCase()
	key := rng.Key{Seed: 0xfeedbeef12345, Epoch: 3, Step: 7, Stream: 251}
	for _, layout := range []int{backend.NegOwn, backend.NegShared, backend.NegInBatch} {
		for _, byDegree := range []bool{false, true} {
			for _, k := range []int{3, 17} {
				name := fmt.Sprintf("EdgeSeeds layout=%d degree=%v k=%d", layout, byDegree, k)
				var db backend.Buffer
				if byDegree {
					db = e.upload(c.dist)
				}
				l := linkLayout{b: c.live, bCap: c.bCap, k: k, layout: layout}
				endCap := backend.LinkEnds(c.bCap, k, layout)
				ends := e.poisonI32(endCap)
				nEnds, nPairs := e.count(-1, 1<<20), e.count(-1, 1<<20)
				r := e.rand(key.Seed, key.Stream, int32(key.Epoch), int32(key.Step))
				e.link().EdgeSeeds(e.upload(c.pairs), e.upload(c.ids), e.count(c.live, c.bCap), k, layout, c.nodes, db, r, ends, nEnds, nPairs)
				got := e.readI32(ends, endCap)
				want := c.wantEnds(e, name, l, key, byDegree, got)
				checkEqual(e.t, name, got[:len(want)], want, 0)
				for i := len(want); i < len(got); i++ {
					if got[i] != -999 {
						e.t.Errorf("%s: end %d past the live ones written (%d)", name, i, got[i])
					}
				}
				if n, p := e.readCount(nEnds), e.readCount(nPairs); n != l.ends() || p != l.pairs() {
					e.t.Errorf("%s: nEnds %d, nPairs %d; want %d, %d", name, n, p, l.ends(), l.pairs())
				}
			}
		}
	}
	// A step sharing every vertex draws each once.
	all := e.poisonI32(backend.LinkEnds(2, c.nodes, backend.NegShared))
	r := e.rand(key.Seed, key.Stream, 1, 1)
	e.link().EdgeSeeds(e.upload(c.pairs), e.upload(c.ids), e.count(2, 2), c.nodes, backend.NegShared, c.nodes, nil, r, all,
		e.count(-1, 1<<20), e.count(-1, 1<<20))
	got := e.readI32(all, 4+c.nodes)[4:]
	slices.Sort(got)
	for v, g := range got {
		if g != int32(v) {
			e.t.Fatalf("EdgeSeeds sharing all %d vertices: sorted %v", c.nodes, got)
		}
	}
}

// wantEnds is the reference of EdgeSeeds's ends for layout l; the shared
// negatives (got's) are checked for what they must be: the reference
// draws (sample.SharedNegatives), distinct, of vertices of some degree
// when drawn by degree.
func (c edgeSeedsCase) wantEnds(e *env, name string, l linkLayout, key rng.Key, byDegree bool, got []int32) []int32 {
	want := make([]int32, l.ends())
	draw := func(w uint32) int32 {
		v := int32(rng.Uniform(w, uint32(c.nodes)))
		if byDegree {
			t := int32(rng.Uniform(w, uint32(c.dist[c.nodes])))
			v = int32(sort.Search(c.nodes, func(u int) bool { return c.dist[u+1] > t }))
			if c.dist[v+1] == c.dist[v] {
				e.t.Fatalf("%s: the reference drew vertex %d of degree 0", name, v)
			}
		}
		return v
	}
	for i, id := range c.ids[:l.b] {
		want[i], want[l.b+i] = c.pairs[2*id], c.pairs[2*id+1]
		for j := 0; j < l.k && l.layout == backend.NegOwn; j++ {
			want[2*l.b+i*l.k+j] = draw(key.Word(uint32(id), uint32(j)))
		}
	}
	if l.layout != backend.NegShared {
		return want
	}
	var dist []int32
	if byDegree {
		dist = c.dist
	}
	shared := want[2*l.b:]
	sample.SharedNegatives(key, backend.SharedIndex, c.nodes, dist, backend.SharedBudget(l.k), shared)
	seen := map[int32]bool{}
	for _, v := range got[2*l.b : 2*l.b+l.k] {
		if seen[v] || v < 0 || int(v) >= c.nodes || (byDegree && c.dist[v+1] == c.dist[v]) {
			e.t.Errorf("%s: shared negatives %v: %d repeated, outside the vertices or of degree 0", name, got[2*l.b:2*l.b+l.k], v)
		}
		seen[v] = true
	}
	return want
}

// groupRowsCase draws rows for m live positions of capacity endCap over u
// rows (each row used at least once) and groups them on the backend.
func (e *env) groupRowsCase(m, endCap, u, rowCap int) (rows []int32, rb, ptr, order backend.Buffer) {
	rows = make([]int32, endCap)
	for q := range rows {
		rows[q] = int32(e.rnd.IntN(u))
		if q < u {
			rows[q] = int32(q)
		}
		if q >= m {
			rows[q] = 1 << 20 // past the live count
		}
	}
	e.rnd.Shuffle(m, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	rb = e.upload(rows)
	ptr, order = e.poisonI32(rowCap+1), e.poisonI32(endCap)
	e.link().GroupRows(rb, e.count(m, endCap), e.count(u, rowCap), ptr, order)
	return rows, rb, ptr, order
}

// testGroupRows: each row's positions, in increasing order.
func testGroupRows(e *env) {
	const m, endCap, u, rowCap = 90, 100, 30, 35
	rows, _, ptr, order := e.groupRowsCase(m, endCap, u, rowCap)
	wantPtr, wantOrder := []int32{0}, []int32{}
	for r := range u {
		for q := range m {
			if rows[q] == int32(r) {
				wantOrder = append(wantOrder, int32(q))
			}
		}
		wantPtr = append(wantPtr, int32(len(wantOrder)))
	}
	checkEqual(e.t, "GroupRows ptr", e.readI32(ptr, u+1), wantPtr, 0)
	checkEqual(e.t, "GroupRows order", e.readI32(order, m), wantOrder, 0)
}

// testPairProduct: the products of every live pair's rows, the gradient
// gathered row by row, against float64 references, in every layout (in
// batch also with fewer positives than negatives, and one); rows past
// the live counts untouched.
func testPairProduct(e *env) {
	for _, l := range []linkLayout{
		{b: 7, bCap: 9, k: 3, layout: backend.NegOwn}, {b: 7, bCap: 9, k: 3, layout: backend.NegShared},
		{b: 7, bCap: 9, k: 3, layout: backend.NegInBatch}, {b: 3, bCap: 9, k: 5, layout: backend.NegInBatch},
		{b: 1, bCap: 2, k: 2, layout: backend.NegInBatch},
	} {
		e.pairProductCase(l)
	}
}

func (e *env) pairProductCase(l linkLayout) {
	name := fmt.Sprintf("PairProduct b=%d k=%d layout=%d", l.b, l.k, l.layout)
	const dim, rowCap = 10, 24
	u := min(18, l.ends())
	endCap := backend.LinkEnds(l.bCap, l.k, l.layout)
	rows, rb, ptr, order := e.groupRowsCase(l.ends(), endCap, u, rowCap)
	x := e.randF32(rowCap*dim, 1)
	xb := e.upload(x)
	pairCap := l.bCap * (1 + l.k)
	h := e.poison(pairCap * dim)
	n := e.count(l.b, l.bCap)
	e.link().PairProduct(xb, dim, n, l.k, l.layout, rb, h)
	want := make([]float64, l.pairs()*dim)
	for p := range l.pairs() {
		a, c := l.pair(p)
		for j := range dim {
			want[p*dim+j] = float64(x[int(rows[a])*dim+j]) * float64(x[int(rows[c])*dim+j])
		}
	}
	e.checkClose(name, e.readF32(h, l.pairs()*dim), want, nil, tolElem, dim)

	dh := e.randF32(pairCap*dim, 1)
	dx := e.alloc(backend.F32, rowCap*dim, 3)
	e.link().PairProductBackward(xb, e.upload(dh), dim, n, l.k, l.layout, rb, ptr, order, e.count(u, rowCap), dx)
	wantDx, scale := make([]float64, rowCap*dim), make([]float64, rowCap*dim)
	for p := range l.pairs() {
		a, c := l.pair(p)
		for _, end := range [][2]int{{a, c}, {c, a}} {
			r, o := int(rows[end[0]]), int(rows[end[1]])
			for j := range dim {
				t := float64(dh[p*dim+j]) * float64(x[o*dim+j])
				wantDx[r*dim+j] += t
				scale[r*dim+j] += math.Abs(t)
			}
		}
	}
	got := e.readF32(dx, rowCap*dim)
	for i := u * dim; i < rowCap*dim; i++ {
		wantDx[i], scale[i] = 3, 3 // past the live rows: untouched
	}
	for i := range scale {
		scale[i] = max(scale[i], 1e-30)
	}
	e.checkClose(name+" backward", got, wantDx, scale, tolSum, dim)
}

// testPairLoss: binary cross-entropy with logits over the live pairs
// (positives first), its gradient and the pairs on their label's side,
// with large scores of both signs.
func testPairLoss(e *env) {
	l := linkLayout{b: 6, bCap: 8, k: 2, layout: backend.NegOwn}
	pairCap := l.bCap * (1 + l.k)
	s := e.randF32(pairCap, 4)
	s[0], s[l.b], s[1] = 60, -70, -0.0
	loss, ds := e.poison(1), e.poison(pairCap)
	correct := e.count(-1, 1<<20)
	e.link().PairLoss(e.upload(s), e.count(l.b, l.bCap), l.k, loss, ds, correct)
	var sum float64
	hits := 0
	wantD := make([]float64, l.pairs())
	inv := 1 / float64(l.pairs())
	for p := range l.pairs() {
		x, y := float64(s[p]), 0.0
		if p < l.b {
			y = 1
		}
		sum += max(x, 0) - x*y + math.Log1p(math.Exp(-math.Abs(x)))
		wantD[p] = (1/(1+math.Exp(-x)) - y) * inv
		if (y == 1 && x > 0) || (y == 0 && x < 0) {
			hits++
		}
	}
	e.checkClose("PairLoss loss", e.readF32(loss, 1), []float64{sum * inv}, nil, tolSum, 0)
	scale := make([]float64, l.pairs())
	for p := range scale {
		scale[p] = inv // the gradient's magnitude: |sigmoid - label| <= 1
	}
	e.checkClose("PairLoss dscores", e.readF32(ds, l.pairs()), wantD, scale, tolElem, 0)
	if got := e.readCount(correct); got != hits {
		e.t.Errorf("PairLoss correct: %d, want %d", got, hits)
	}
}
