package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/backendtest"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestConformanceDeterministic runs the suite with the deterministic
// aggregation backward.
func TestConformanceDeterministic(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return openTest(t, Options{Deterministic: true}) })
}

// detCase is a host block for the deterministic backward: destinations
// with 0 to maxDeg edges, sources drawn from a few hubs (long per-source
// lists) or uniformly, a few edges with sources outside the live range
// (skipped), and garbage past the live edges.
type detCase struct {
	nd, ne, ns   int
	indptr       []int32 // [nd+1]
	indices      []int32 // [ne]
	edgeW, selfW []float32
	dout, dx0    []float32 // [nd, dim], [ns, dim]
	dim          int
	withSelf     bool
}

func newDetCase(seed uint64, nd, ns, maxDeg, dim int, self bool) *detCase {
	r := rand.New(rand.NewPCG(seed, 77))
	h := &detCase{nd: nd, ns: ns, dim: dim, withSelf: self, indptr: make([]int32, nd+1)}
	for i := range nd {
		deg := r.IntN(maxDeg + 1)
		for range deg {
			var j int32
			switch u := r.Float64(); {
			case u < 0.2:
				j = int32(r.IntN(8)) * int32(ns/8) // hubs
			case u < 0.205:
				j = int32(ns + r.IntN(3)) // outside the live sources: skipped
			case u < 0.21:
				j = -1
			default:
				j = int32(r.IntN(ns))
			}
			h.indices = append(h.indices, j)
		}
		h.indptr[i+1] = int32(len(h.indices))
	}
	h.ne = len(h.indices)
	h.edgeW = randF32(r, h.ne)
	h.selfW = randF32(r, nd)
	h.dout = randF32(r, nd*dim)
	h.dx0 = randF32(r, ns*dim)
	return h
}

// reference is dx0 plus the backward in float64, and the sums of
// magnitudes.
func (h *detCase) reference() (want, scale []float64) {
	want, scale = make([]float64, h.ns*h.dim), make([]float64, h.ns*h.dim)
	for i, v := range h.dx0 {
		want[i], scale[i] = float64(v), math.Abs(float64(v))
	}
	add := func(j int, w float32, i int) {
		for c := range h.dim {
			t := float64(w) * float64(h.dout[i*h.dim+c])
			want[j*h.dim+c] += t
			scale[j*h.dim+c] += math.Abs(t)
		}
	}
	for i := range h.nd {
		if h.withSelf {
			add(i, h.selfW[i], i)
		}
		for e := h.indptr[i]; e < h.indptr[i+1]; e++ {
			if j := int(h.indices[e]); j >= 0 && j < h.ns {
				add(j, h.edgeW[e], i)
			}
		}
	}
	return want, scale
}

// detBufs are a detCase on the device with the given extra capacity.
type detBufs struct {
	blk                 *backend.Block
	ew, sw, dout, dx    backend.Buffer
	dstCap, srcCap, dim int
}

// blockArrays are h's Indptr and Indices at capacities dstCap and edgeCap,
// with garbage past the live edges.
func (h *detCase) blockArrays(dstCap, edgeCap int) (indptr, indices []int32) {
	indptr = make([]int32, dstCap+1)
	copy(indptr, h.indptr)
	for i := h.nd + 1; i <= dstCap; i++ {
		indptr[i] = int32(h.ne)
	}
	indices = make([]int32, edgeCap)
	copy(indices, h.indices)
	for e := h.ne; e < edgeCap; e++ {
		indices[e] = int32(e % max(1, h.ns))
	}
	return indptr, indices
}

func (h *detCase) upload(t testing.TB, b *Backend, pad int) *detBufs {
	dstCap, edgeCap, srcCap := h.nd+pad, h.ne+3*pad, h.ns+2*pad
	indptr, indices := h.blockArrays(dstCap, edgeCap)
	grow := func(s []float32, n int) []float32 {
		out := make([]float32, n)
		copy(out, s)
		for i := len(s); i < n; i++ {
			out[i] = 1e6
		}
		return out
	}
	d := &detBufs{dstCap: dstCap, srcCap: srcCap, dim: h.dim}
	d.blk = &backend.Block{NumDst: countBuf(t, b, h.nd, dstCap), NumEdges: countBuf(t, b, h.ne, edgeCap),
		NumSrc: countBuf(t, b, h.ns, srcCap), Indptr: upload(t, b, indptr), Indices: upload(t, b, indices)}
	d.ew = upload(t, b, grow(h.edgeW, edgeCap))
	if h.withSelf {
		d.sw = upload(t, b, grow(h.selfW, dstCap))
	}
	d.dout = upload(t, b, grow(h.dout, dstCap*h.dim))
	d.dx = upload(t, b, grow(h.dx0, srcCap*h.dim))
	return d
}

func (d *detBufs) run(b *Backend) { b.AggregateBackward(d.blk, d.ew, d.sw, d.dout, d.dim, d.dx) }

// reset puts dx0 back into dx.
func (d *detBufs) reset(t testing.TB, b *Backend, h *detCase) {
	b.Write(d.dx, 0, h.dx0)
	must(t, b)
}

// TestDeterministicAggregateBackward: the sort-and-gather backward matches
// a float64 reference, leaves padding rows alone, and gives bitwise the
// same dx on a second run, from a captured graph, and with other
// capacities (other grids and radix digits).
func TestDeterministicAggregateBackward(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	cases := []struct {
		nd, ns, maxDeg, dim int
		self                bool
	}{
		{1, 1, 3, 1, true},
		{300, 700, 6, 33, false},
		{3000, 9000, 12, 100, true},
		{5000, 20000, 20, 256, true},
		{2000, 1 << 20, 10, 4, false}, // keys past 20 bits: three digits
	}
	for k, tc := range cases {
		t.Run(fmt.Sprintf("nd=%d/ns=%d/dim=%d/self=%v", tc.nd, tc.ns, tc.dim, tc.self), func(t *testing.T) {
			h := newDetCase(uint64(k), tc.nd, tc.ns, tc.maxDeg, tc.dim, tc.self)
			d := h.upload(t, b, 37)
			d.run(b)
			first := readF32(t, b, d.dx, d.srcCap*h.dim)
			want, scale := h.reference()
			worst := 0.0
			for i, w := range want {
				err := math.Abs(float64(first[i]) - w)
				if lim := 1e-4*scale[i] + 1e-6; err > lim || math.IsNaN(float64(first[i])) {
					t.Fatalf("dx[%d] = %v, want %v (scale %v)", i, first[i], w, scale[i])
				}
				worst = max(worst, err/(scale[i]+1e-30))
			}
			for i := h.ns * h.dim; i < len(first); i++ {
				if first[i] != 1e6 {
					t.Fatalf("padding dx[%d] = %v, want it untouched (1e6)", i, first[i])
				}
			}
			d.reset(t, b, h)
			d.run(b)
			if again := readF32(t, b, d.dx, d.srcCap*h.dim); !slices.Equal(again, first) {
				t.Fatal("second run differs bitwise")
			}
			d.reset(t, b, h)
			g := captureGraph(t, b, func() { d.run(b) })
			g.Launch()
			g.Close()
			if got := readF32(t, b, d.dx, d.srcCap*h.dim); !slices.Equal(got, first) {
				t.Fatal("captured run differs bitwise")
			}
			o := h.upload(t, b, 5000)
			o.run(b)
			if got := readF32(t, b, o.dx, h.ns*h.dim); !slices.Equal(got, first[:h.ns*h.dim]) {
				t.Fatal("run with other capacities differs bitwise")
			}
			// The atomic kernel agrees within rounding.
			a := openTest(t, Options{})
			ad := h.upload(t, a, 37)
			ad.run(a)
			atom := readF32(t, a, ad.dx, h.ns*h.dim)
			diff := 0
			for i := range atom {
				if math.Abs(float64(atom[i]-first[i])) > 2e-4*scale[i]+1e-6 {
					t.Fatalf("dx[%d]: deterministic %v, atomic %v", i, first[i], atom[i])
				}
				if atom[i] != first[i] {
					diff++
				}
			}
			t.Logf("%d edges; largest error %.2g of the magnitude sum; %d of %d values differ from the atomic kernel's in the last bits",
				h.ne, worst, diff, len(atom))
		})
	}
}

// gatCase is one GAT layer's attention forward and backward on a detCase
// block (hubs, sources outside the live range, garbage past the live
// edges), with attention dropout keyed by made-up vertex ids; bip makes
// the block bipartite (no self loops).
type gatCase struct {
	h                  *detCase
	heads, dim         int
	mean, bip          bool
	z, el, er, dout, a []float32
	keys               []int32
}

func newGATCase(seed uint64, nd, ns, maxDeg, heads, dim int, mean, bip bool) *gatCase {
	r := rand.New(rand.NewPCG(seed, 78))
	g := &gatCase{h: newDetCase(seed, nd, ns, maxDeg, 1, false), heads: heads, dim: dim, mean: mean, bip: bip}
	w, ow := heads*dim, heads*dim
	if mean {
		ow = dim
	}
	g.z, g.el, g.er = randF32(r, ns*w), randF32(r, ns*heads), randF32(r, nd*heads)
	g.dout, g.a = randF32(r, nd*ow), randF32(r, w)
	g.keys = make([]int32, nd)
	for i := range g.keys {
		g.keys[i] = int32(r.IntN(1 << 20))
	}
	return g
}

// gatOutputs names the live outputs of a run.
var gatOutputs = []string{"coef", "out", "dcoef", "dz", "del", "der", "da"}

// run issues the layer's ops on be at capacities pad above the live sizes
// (inside a capture, replayed once, when capture is set) and returns every
// output's live values.
func (g *gatCase) run(t *testing.T, be backend.Backend, pad int, capture bool) map[string][]float32 {
	h, H, w := g.h, g.heads, g.heads*g.dim
	ow := w
	if g.mean {
		ow = g.dim
	}
	dstCap, edgeCap, srcCap := h.nd+pad, h.ne+3*pad, h.ns+2*pad
	indptr, indices := h.blockArrays(dstCap, edgeCap)
	grow := func(s []float32, n int) backend.Buffer {
		out := make([]float32, n)
		copy(out, s)
		return upload(t, be, out)
	}
	keys := make([]int32, dstCap)
	copy(keys, g.keys)
	blk := &backend.Block{NumDst: countBuf(t, be, h.nd, dstCap), NumEdges: countBuf(t, be, h.ne, edgeCap),
		NumSrc: countBuf(t, be, h.ns, srcCap), Indptr: upload(t, be, indptr), Indices: upload(t, be, indices),
		Bipartite: g.bip}
	z, el, er := grow(g.z, srcCap*w), grow(g.el, srcCap*H), grow(g.er, dstCap*H)
	dout, a := grow(g.dout, dstCap*ow), upload(t, be, g.a)
	bufs := map[string]backend.Buffer{"coef": grow(nil, (dstCap+edgeCap)*H), "out": grow(nil, dstCap*ow),
		"dcoef": grow(nil, (dstCap+edgeCap)*H), "dz": grow(nil, srcCap*w), "del": grow(nil, srcCap*H),
		"der": grow(nil, dstCap*H), "da": grow(nil, w), "none": grow(nil, w)}
	noRows := countBuf(t, be, 0, srcCap)
	r := backend.Rand{Seed: 17, Stream: 161, Clock: upload(t, be, []int32{2, 5}), Keys: upload(t, be, keys)}
	att, err := backend.AttentionOf(be)
	if err != nil {
		t.Fatal(err)
	}
	ops := func() {
		att.EdgeSoftmax(blk, el, er, H, 0.2, 0.3, r, bufs["coef"])
		att.HeadAggregate(blk, bufs["coef"], z, H, g.dim, g.mean, bufs["out"], false)
		be.Fill(bufs["dz"], 0)
		att.HeadAggregateBackward(blk, bufs["coef"], z, dout, H, g.dim, g.mean, bufs["dcoef"], bufs["dz"])
		att.EdgeSoftmaxBackward(blk, el, er, H, 0.2, 0.3, r, bufs["dcoef"], bufs["del"], bufs["der"])
		att.HeadDotBackward(z, bufs["del"], bufs["del"], blk.NumSrc, noRows, H, g.dim, a, a, bufs["dz"], true, bufs["da"], bufs["none"])
	}
	if !capture {
		ops()
	} else {
		rep := captureGraph(t, be.(backend.Capturer), ops)
		rep.Launch()
		defer rep.Close()
	}
	out := map[string][]float32{}
	for name, buf := range bufs {
		all := readF32(t, be, buf, buf.Len())
		switch name {
		case "coef", "dcoef": // self loops, then edges
			out[name] = append(slices.Clone(all[:h.nd*H]), all[dstCap*H:(dstCap+h.ne)*H]...)
		case "out":
			out[name] = all[:h.nd*ow]
		case "dz":
			out[name] = all[:h.ns*w]
		case "del":
			out[name] = all[:h.ns*H]
		case "der":
			out[name] = all[:h.nd*H]
		default:
			out[name] = all
		}
	}
	return out
}

// TestDeterministicAttention: with Options.Deterministic the attention ops
// give bitwise the same outputs on a second run, from a captured graph and
// at other capacities; they agree with the CPU backend and with the atomic
// kernels within rounding, over blocks of one vertex space and bipartite
// ones (more destinations than sources among them).
func TestDeterministicAttention(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	atomic := openTest(t, Options{})
	host := cpu.New(2)
	defer host.Close()
	for k, tc := range []struct {
		nd, ns, maxDeg, heads, dim int
		mean, bip                  bool
	}{{1, 1, 3, 1, 1, false, false}, {300, 700, 6, 3, 8, false, false}, {2000, 6000, 20, 4, 16, true, false},
		{500, 3000, 40, 8, 8, false, false}, {3000, 8000, 10, 4, 64, false, false}, {800, 3000, 12, 4, 47, true, false},
		{200, 600, 5, 2, 130, false, false}, {3000, 900, 10, 4, 64, false, true}, {800, 300, 12, 4, 47, true, true},
		{200, 600, 5, 2, 130, true, true},
		// More (destination, head) pairs than the softmax kernels' grid has
		// threads on any device, so that the sweeps stride (long lists among
		// them in the second).
		{300000, 400000, 6, 4, 8, false, false}, {150000, 100000, 40, 8, 8, false, true},
		// Warps of the grouped HeadAggregate kernels that take two
		// destinations (float4 words of 4 heads x 128, and floats).
		{60000, 40000, 12, 4, 128, true, true}, {50000, 60000, 10, 4, 47, false, false}} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			g := newGATCase(uint64(k), tc.nd, tc.ns, tc.maxDeg, tc.heads, tc.dim, tc.mean, tc.bip)
			first := g.run(t, b, 37, false)
			for what, got := range map[string]map[string][]float32{
				"second run": g.run(t, b, 37, false), "captured run": g.run(t, b, 37, true),
				"run with other capacities": g.run(t, b, 5000, false),
			} {
				for _, name := range gatOutputs {
					if !slices.Equal(got[name], first[name]) {
						t.Errorf("%s: %s differs bitwise", what, name)
					}
				}
			}
			// The atomic kernels add a source's terms in float32 in any order:
			// on the 150,000-destination block some sources take tens of
			// thousands of adds, whose rounding reaches 6e-4; the
			// deterministic kernels add in a fixed order, as the CPU does.
			for what, got := range map[string]map[string][]float32{"CPU backend": g.run(t, host, 3, false),
				"atomic kernels": g.run(t, atomic, 37, false)} {
				tol := map[string]float64{"CPU backend": 1e-4, "atomic kernels": 2e-3}[what]
				for _, name := range gatOutputs {
					worst := 0.0
					for i, v := range got[name] {
						d := math.Abs(float64(v - first[name][i]))
						worst = max(worst, d/(1+math.Abs(float64(v))))
						if d > tol*(1+math.Abs(float64(v))) || math.IsNaN(float64(first[name][i])) {
							t.Fatalf("%s[%d]: deterministic %v, %s %v", name, i, first[name][i], what, v)
						}
					}
					t.Logf("%s: %s within %.2g", what, name, worst)
				}
			}
		})
	}
}
