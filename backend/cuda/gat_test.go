package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// gatCase is one GAT layer's attention forward and backward on a detCase
// block (hubs, sources outside the live range, garbage past the live
// edges), with attention dropout keyed by made-up vertex ids.
type gatCase struct {
	h                  *detCase
	heads, dim         int
	mean               bool
	z, el, er, dout, a []float32
	keys               []int32
}

func newGATCase(seed uint64, nd, ns, maxDeg, heads, dim int, mean bool) *gatCase {
	r := rand.New(rand.NewPCG(seed, 78))
	g := &gatCase{h: newDetCase(seed, nd, ns, maxDeg, 1, false), heads: heads, dim: dim, mean: mean}
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
		NumSrc: countBuf(t, be, h.ns, srcCap), Indptr: upload(t, be, indptr), Indices: upload(t, be, indices)}
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
		att.HeadAggregate(blk, bufs["coef"], z, H, g.dim, g.mean, bufs["out"])
		be.Fill(bufs["dz"], 0)
		att.HeadAggregateBackward(blk, bufs["coef"], z, dout, H, g.dim, g.mean, bufs["dcoef"], bufs["dz"])
		att.EdgeSoftmaxBackward(blk, el, er, H, 0.2, 0.3, r, bufs["dcoef"], bufs["del"], bufs["der"])
		att.HeadDotBackward(z, bufs["del"], bufs["del"], blk.NumSrc, noRows, H, g.dim, a, a, bufs["dz"], bufs["da"], bufs["none"])
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
// kernels within rounding.
func TestDeterministicAttention(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	atomic := openTest(t, Options{})
	host := cpu.New(2)
	defer host.Close()
	for k, tc := range []struct {
		nd, ns, maxDeg, heads, dim int
		mean                       bool
	}{{1, 1, 3, 1, 1, false}, {300, 700, 6, 3, 8, false}, {2000, 6000, 20, 4, 16, true}, {500, 3000, 40, 8, 8, false},
		{3000, 8000, 10, 4, 64, false}, {800, 3000, 12, 4, 47, true}, {200, 600, 5, 2, 130, false}} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			g := newGATCase(uint64(k), tc.nd, tc.ns, tc.maxDeg, tc.heads, tc.dim, tc.mean)
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
			for what, got := range map[string]map[string][]float32{"CPU backend": g.run(t, host, 3, false),
				"atomic kernels": g.run(t, atomic, 37, false)} {
				for _, name := range gatOutputs {
					worst := 0.0
					for i, v := range got[name] {
						d := math.Abs(float64(v - first[name][i]))
						worst = max(worst, d/(1+math.Abs(float64(v))))
						if d > 1e-4*(1+math.Abs(float64(v))) || math.IsNaN(float64(first[name][i])) {
							t.Fatalf("%s[%d]: deterministic %v, %s %v", name, i, first[name][i], what, v)
						}
					}
					t.Logf("%s: %s within %.2g", what, name, worst)
				}
			}
		})
	}
}
