package nn

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
)

// ginLayer is the Graph Isomorphism Network layer (Xu et al. 2019):
//
//	h_dst = MLP((1 + ε)·x_dst + Σ_{j ∈ N(dst)} x_j)
//	MLP(a) = ReLU(a·W1 + b1)·W2   (+ b2, applied by the model)
//
// The sum is what training summed: a layer trained on k sampled
// neighbours (Config.GINFanouts) weighs each sampled neighbour
// min(deg, k)/sampled (GINWeights), which is 1 in training (sampling
// without replacement draws min(deg, k)), as PyTorch Geometric's sampled
// GIN sums; where evaluation sums more (full-neighbour inference), each of
// a vertex's deg neighbours weighs min(deg, k)/deg, the expectation of the
// training sum, so the sums, and the batch normalisation's running
// statistics learned on them, keep their training scale. Summing all
// neighbours at full weight instead makes hub rows thousands of times the
// others on power-law graphs, and normalised GIN then learns nothing
// (docs/perf.md, issue 26). A layer trained on every neighbour (k = -1, or
// GINFanouts empty) weighs deg/sampled: the full sum, estimated from a
// sample. ε is fixed at 0 or learned (a parameter of one element whose gradient is Σ_i <x_i, dagg_i>,
// computed on the device by DotSum).
//
// Parameters: layerN.w1 [in, out], layerN.b1 [out], layerN.w2 [out, out],
// layerN.bias [out] (the model's bias), and layerN.eps [1] when learned.
type ginLayer struct {
	sideWork   // the weight gradients put beside (besideWork)
	be         backend.Backend
	in, out    int
	w1, b1, w2 *Param
	b          *Param
	eps        *Param // learned ε, or nil
	fanout     int    // training fanout of the layer's sum (-1: every neighbour)
	// inner is the MLP's normalisation after its first product (and b1),
	// before its ReLU, as PyTorch Geometric's GIN puts its norm in the
	// MLP; nil without Config.Norm.
	inner *normLayer

	ws     workspace
	caps   Caps
	srcDeg backend.Buffer // F32 [caps.Src] full-graph degree of each source
	edgeW  backend.Buffer // F32 [caps.Edges]
	selfW  backend.Buffer // F32 [caps.Dst]
	agg    backend.Buffer // F32 [caps.Dst, in]: the weighted sum (kept for backward)
	z      backend.Buffer // F32 [caps.Dst, out]: ReLU(agg·W1 + b1), or of its normalisation (kept for backward)
	zin    backend.Buffer // F32 [caps.Dst, out]: agg·W1, the MLP normalisation's input (kept for its backward), with one only
	dz     backend.Buffer // F32 [caps.Dst, out]
	dAgg   backend.Buffer // F32 [caps.Dst, in]
	eps0   backend.Buffer // F32 [1] zero: the fixed ε
}

func newGIN(be backend.Backend, pa *paramAlloc, l, in, out int, learnEps bool, seed uint64) (*ginLayer, error) {
	g := &ginLayer{be: be, in: in, out: out, ws: workspace{be: be}}
	var err error
	mk := func(p **Param, name string, shape ...int) {
		if err == nil {
			*p, err = newParam(pa, fmt.Sprintf("layer%d.%s", l, name), shape...)
		}
	}
	mk(&g.w1, "w1", in, out)
	mk(&g.b1, "b1", out)
	mk(&g.w2, "w2", out, out)
	mk(&g.b, "bias", out)
	if learnEps {
		mk(&g.eps, "eps", 1)
	}
	if err != nil {
		g.free()
		return nil, err
	}
	initGlorot(be, g.w1, seed, l, 0)
	initGlorot(be, g.w2, seed, l, 1)
	return g, nil
}

// newGINNormed is newGIN with the MLP's normalisation of cfg.Norm
// (layerN.mlp_norm.weight, .bias and, for batch normalisation, .running).
func newGINNormed(be backend.Backend, pa *paramAlloc, cfg Config, l, in, out int, seed uint64) (*ginLayer, error) {
	g, err := newGIN(be, pa, l, in, out, cfg.LearnEps, seed)
	if err != nil {
		return nil, err
	}
	fanouts, err := cfg.ginFanouts()
	if err != nil {
		g.free()
		return nil, err
	}
	g.fanout = -1
	if fanouts != nil {
		g.fanout = fanouts[cfg.Layers-1-l] // hop 0 samples the top layer's neighbours
	}
	if cfg.Norm == "" || cfg.Norm == NormNone {
		return g, err
	}
	if g.inner, err = makeNorm(be, pa, cfg, fmt.Sprintf("layer%d.mlp_norm", l), out); err != nil {
		g.free()
		return nil, err
	}
	return g, nil
}

// ginFanouts parses GINFanouts: nil when empty, else one fanout (-1 or
// more) per layer, per hop from the seeds.
func (c Config) ginFanouts() ([]int, error) {
	if c.GINFanouts == "" {
		return nil, nil
	}
	if c.Kind != KindGIN {
		return nil, fmt.Errorf("nn: config GINFanouts %q: only %q weighs its sums by the training fanouts, not %q", clip(c.GINFanouts), KindGIN, c.Kind)
	}
	parts := strings.Split(c.GINFanouts, ",")
	if len(parts) != c.Layers {
		return nil, fmt.Errorf("nn: config GINFanouts %q: %d values for %d layers; want one per layer", clip(c.GINFanouts), len(parts), c.Layers)
	}
	fs := make([]int, len(parts))
	for i, p := range parts {
		f, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || f < -1 {
			return nil, fmt.Errorf("nn: config GINFanouts %q: value %d %q is not a fanout (an integer, -1 for every neighbour)", clip(c.GINFanouts), i+1, clip(p))
		}
		fs[i] = f
	}
	return fs, nil
}

// clip shortens s to at most 200 bytes for an error message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func (g *ginLayer) free() {
	for _, p := range []*Param{g.w1, g.b1, g.w2, g.b, g.eps} {
		if p != nil {
			p.free(g.be)
		}
	}
	if g.inner != nil {
		g.inner.free()
	}
}

func (g *ginLayer) params() []*Param {
	ps := []*Param{g.w1, g.b1, g.w2, g.b}
	if g.eps != nil {
		ps = append(ps, g.eps)
	}
	if g.inner != nil {
		ps = append(ps, g.inner.params()...)
	}
	return ps
}

func (g *ginLayer) bias() *Param { return g.b }

func (g *ginLayer) epsBuf() backend.Buffer {
	if g.eps != nil {
		return g.eps.W
	}
	return g.eps0
}

func (g *ginLayer) reserve(c Caps) error {
	g.ws.release()
	g.caps = c
	g.srcDeg = g.ws.alloc("gin source degrees", backend.F32, c.Src)
	g.edgeW = g.ws.alloc("gin edge weights", backend.F32, c.Edges)
	g.selfW = g.ws.alloc("gin self weights", backend.F32, c.Dst)
	g.agg = g.ws.allocRows("gin sum", backend.F32, c.Dst*g.in)
	g.z = g.ws.allocRows("gin hidden", backend.F32, c.Dst*g.out)
	g.dz = g.ws.allocRows("gin hidden gradient", backend.F32, c.Dst*g.out)
	g.dAgg = g.ws.alloc("gin sum gradient", backend.F32, c.Dst*g.in)
	g.eps0 = g.ws.alloc("gin fixed epsilon", backend.F32, 1)
	g.zin = nil
	if g.inner != nil {
		g.zin = g.ws.allocRows("gin MLP normalisation input", backend.F32, c.Dst*g.out)
		g.inner.reserve(&g.ws, "gin MLP normalisation", c.Dst, false)
	}
	return g.ws.done()
}

func (g *ginLayer) release() { g.ws.release() }

// prepare gathers the sources' full-graph degrees and sets the sum weights.
func (g *ginLayer) prepare(blk *backend.Block, deg backend.Buffer) {
	g.be.Gather(deg, 1, blk.SrcIDs, blk.NumSrc, g.srcDeg)
	g.be.GINWeights(blk, g.srcDeg, g.fanout, g.epsBuf(), g.edgeW, g.selfW)
}

// forward writes h[:NumDst] (h [caps.Dst, out]) from x [caps.Src, in].
func (g *ginLayer) forward(blk *backend.Block, x, h backend.Buffer, ps pass) {
	be := g.be
	be.Aggregate(blk, g.edgeW, g.selfW, x, g.in, g.agg)
	addHot(ps.hot, blk, g.in, g.agg, g.in, 0)
	if g.inner != nil {
		be.Linear(g.agg, blk.NumDst, g.w1.W, g.in, g.out, g.zin, false)
		g.inner.forwardAct(g.zin, blk.NumDst, g.b1.W, ps.train, normAct{relu: true}, g.z)
	} else {
		be.Linear(g.agg, blk.NumDst, g.w1.W, g.in, g.out, g.z, false)
		be.BiasActDropout(g.z, blk.NumDst, g.out, g.b1.W, true, 0, backend.Rand{}, nil, g.z)
	}
	be.Linear(g.z, blk.NumDst, g.w2.W, g.out, g.out, h, false)
}

// backward overwrites the gradients of w1, b1, w2 (and ε) from dh
// [caps.Dst, out] and, when dx is non-nil, overwrites dx [caps.Src, in].
func (g *ginLayer) backward(blk *backend.Block, x, dh, dx backend.Buffer) {
	be := g.be
	g.beside(be, func() { be.LinearBackwardWeight(g.z, dh, blk.NumDst, g.out, g.out, g.w2.G, false) })
	be.LinearBackwardData(dh, blk.NumDst, g.w2.W, g.out, g.out, g.dz, false)
	if g.inner != nil {
		g.inner.backward(g.dz, backend.ActGrad{Relu: true, Y: g.z}, blk.NumDst, g.b1.G, g.dz)
	} else {
		be.BiasActDropoutBackward(g.dz, g.z, blk.NumDst, g.out, true, 0, nil, g.dz, g.b1.G)
	}
	g.beside(be, func() { be.LinearBackwardWeight(g.agg, g.dz, blk.NumDst, g.in, g.out, g.w1.G, false) })
	if dx == nil && g.eps == nil {
		return
	}
	be.LinearBackwardData(g.dz, blk.NumDst, g.w1.W, g.in, g.out, g.dAgg, false)
	if g.eps != nil {
		// dε = Σ_i <x_i, dagg_i>: destination i is source row i.
		be.DotSum(rows(be, x, g.caps.Dst, g.in), g.dAgg, blk.NumDst, g.in, g.eps.G)
	}
	if dx != nil {
		be.Fill(dx, 0)
		be.AggregateBackward(blk, g.edgeW, g.selfW, g.dAgg, g.in, dx)
	}
}

func (g *ginLayer) workspace() *workspace { return &g.ws }

func (g *ginLayer) inferCopy() layer {
	c := *g
	c.ws = workspace{be: g.be}
	c.inner = g.inner.inferCopy()
	return &c
}
