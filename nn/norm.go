package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Normalisation after a hidden layer (Config.Norm), as PyTorch Geometric's
// BasicGNN places it: the layer's output plus its bias is normalised, then
// goes through ReLU and dropout.
//
//	batch: per column over the batch's live rows in training (the
//	       statistics of the pass), by the running statistics otherwise;
//	       the running statistics follow the batches' with momentum 0.1
//	       (PyTorch's), updated by Update in the step, so a replayed step
//	       updates them on the device and a skipped step leaves them.
//	layer: per row over its columns, the same in training and evaluation.
//
// Both scale and shift with learned vectors. Parameters: layerN.norm.weight
// [out] (ones), layerN.norm.bias [out] (zeros) and, for batch
// normalisation, layerN.norm.running [2, out] (the running means, zeros,
// then the running variances, ones): a buffer, saved with the model but
// neither trained nor decayed (Param.Buffer).

// Normalisation kinds accepted by Config.Norm ("" is NormNone).
const (
	NormNone  = "none"
	NormBatch = "batch"
	NormLayer = "layer"
)

// Normalisation constants, PyTorch's defaults.
const (
	normEps      = 1e-5
	normMomentum = 0.1
)

// normLayer is the normalisation after one hidden layer.
type normLayer struct {
	be                   backend.Backend
	ops                  backend.Norm
	perRow               bool // layer normalisation
	dim                  int
	gamma, beta, running *Param         // running is nil for layer normalisation
	pre                  backend.Buffer // F32 [caps.Dst, dim]: the layer's output plus bias (kept for backward), where reserve keeps a copy
	x                    backend.Buffer // the rows the last training pass normalised (pre, or the caller's own)
	bias                 backend.Buffer // the bias the last training pass left out of x and its statistics, or nil
	stats                backend.Buffer // F32 [2·dim]: the last training pass's batch statistics
	n                    backend.Count  // the rows of the last training pass (the group's when synchronised)
	pending              bool           // a training pass whose statistics Update has yet to fold in

	// sync, when set, is the group whose ranks normalise by the batch
	// statistics of all their rows (synchronised batch normalisation,
	// SyncNorm): moments and the backward's sums are all-reduced in the
	// step.
	sync    backend.Collective
	moments backend.Buffer // F32 [2·dim+1]: the moments, then the backward's sums
	group   backend.Buffer // I32 [1]: the group's rows
}

// newNorm makes the normalisation of model layer l's output (dim wide), or
// nil when cfg asks for none.
func newNorm(be backend.Backend, pa *paramAlloc, cfg Config, l, dim int) (*normLayer, error) {
	if !cfg.normed(l) {
		return nil, nil
	}
	return makeNorm(be, pa, cfg, fmt.Sprintf("layer%d.norm", l), dim)
}

// makeNorm makes a normalisation of cfg's kind whose parameters are named
// prefix.weight, prefix.bias and prefix.running.
func makeNorm(be backend.Backend, pa *paramAlloc, cfg Config, prefix string, dim int) (*normLayer, error) {
	ops, err := backend.NormOf(be)
	if err != nil {
		return nil, fmt.Errorf("nn: %s normalisation: %w", cfg.Norm, err)
	}
	n := &normLayer{be: be, ops: ops, perRow: cfg.Norm == NormLayer, dim: dim}
	name := func(s string) string { return prefix + "." + s }
	if n.gamma, err = newParam(pa, name("weight"), dim); err == nil {
		n.beta, err = newParam(pa, name("bias"), dim)
	}
	if err == nil && !n.perRow {
		if n.running, err = newParam(pa, name("running"), 2, dim); err == nil {
			n.running.Buffer = true
		}
	}
	if err != nil {
		n.free()
		return nil, err
	}
	be.Fill(n.gamma.W, 1)
	if n.running != nil {
		be.Fill(be.View(n.running.W, dim, dim), 1)
	}
	return n, nil
}

// normed reports whether model layer l's output is normalised: every
// hidden layer's, and the top one's too under jumping knowledge.
func (c Config) normed(l int) bool {
	return c.Norm != "" && c.Norm != NormNone && c.hiddenOut(l)
}

func (n *normLayer) params() []*Param {
	ps := []*Param{n.gamma, n.beta}
	if n.running != nil {
		ps = append(ps, n.running)
	}
	return ps
}

func (n *normLayer) free() {
	for _, p := range []*Param{n.gamma, n.beta, n.running} {
		if p != nil {
			p.free(n.be)
		}
	}
}

// reserve allocates the kept input and the batch statistics for dst rows
// (what names the normalisation in errors). Unless keep, a batch
// normalisation keeps no copy of its input: its caller writes the output
// elsewhere (forwardAct's y is not h) and leaves h as it is until backward.
func (n *normLayer) reserve(ws *workspace, what string, dst int, keep bool) {
	n.pre = nil
	if keep || n.perRow {
		n.pre = ws.alloc(what+" input", backend.F32, dst*n.dim)
	}
	n.stats = ws.alloc(what+" batch statistics", backend.F32, 2*n.dim)
	n.moments = ws.alloc(what+" moments", backend.F32, 2*n.dim+1)
	n.group = ws.alloc(what+" group rows", backend.I32, 1)
	n.pending = false
}

// inferCopy is a copy sharing n's parameters, with workspaces of its own
// once reserved.
func (n *normLayer) inferCopy() *normLayer {
	if n == nil {
		return nil
	}
	c := *n
	c.pre, c.x, c.bias, c.stats, c.moments, c.group, c.pending = nil, nil, nil, nil, nil, nil, false
	return &c
}

// normAct is the activation a hidden layer applies after its
// normalisation: ReLU when relu, and dropout with probability p from
// stream r into mask (BiasActDropout's), which NormApply applies as it
// writes. The zero value leaves the normalised rows as they are.
type normAct struct {
	relu bool
	p    float32
	r    backend.Rand
	mask backend.Buffer
}

// forward normalises h (rows [:count], the layer's output before its bias)
// in place: in training by the pass's statistics, keeping h plus bias for
// backward (reserve with keep); otherwise as inferAct does (h's rows may
// then exceed the reserved ones: layer-wise inference).
func (n *normLayer) forward(h backend.Buffer, count backend.Count, bias backend.Buffer, train bool) {
	n.forwardAct(h, count, bias, train, normAct{}, h)
}

// forwardAct is forward writing y (F32 rows [:count]; it may be h where
// reserve kept a copy) through the activation a, in the same pass: the
// bits BiasActDropout would give applied after forward. A batch
// normalisation that keeps no copy normalises h itself, without the bias:
// a column's mean absorbs it, so the output is the same (the very bits
// where the bias is 0, as it stays: its gradient is exactly 0), and update
// adds it back to the running means.
func (n *normLayer) forwardAct(h backend.Buffer, count backend.Count, bias backend.Buffer, train bool, a normAct, y backend.Buffer) {
	if !train {
		n.be.BiasActDropout(h, count, n.dim, bias, false, 0, backend.Rand{}, nil, h)
		n.inferAct(h, count, a, y)
		return
	}
	stats := n.stats
	n.x, n.bias = n.pre, nil
	switch {
	case n.perRow:
		n.be.BiasActDropout(h, count, n.dim, bias, false, 0, backend.Rand{}, nil, n.pre)
		stats = nil
	case n.sync != nil:
		// The group's statistics: each rank's moments, summed.
		n.statsOf(h, count, bias)
		n.ops.NormMoments(n.stats, count, n.dim, n.moments)
		n.sync.AllReduceSum(n.moments)
		// At most every rank's capacity: a backend bounds its loops by it.
		n.n = backend.Count{Buf: n.group, Cap: count.Cap * n.sync.Size()}
		n.ops.NormFromMoments(n.moments, n.dim, n.stats, n.n)
		n.pending = true
	default:
		n.statsOf(h, count, bias)
		n.n, n.pending = count, true
	}
	n.ops.NormApply(n.x, count, n.dim, n.perRow, stats, n.gamma.W, n.beta.W, normEps, a.relu, a.p, a.r, a.mask, y)
}

// statsOf takes the batch statistics of h's rows [:count] into n.stats
// and keeps in n.x the rows backward reads: h itself, the bias left out
// (n.bias), where reserve kept no copy; else h plus bias written to n.pre,
// with a bias in the same pass.
func (n *normLayer) statsOf(h backend.Buffer, count backend.Count, bias backend.Buffer) {
	switch {
	case n.pre == nil:
		n.x, n.bias = h, bias
		n.ops.BatchNormStats(h, count, n.dim, nil, nil, n.stats)
	case bias == nil: // nothing to add: h's rows copied, then summed
		n.be.BiasActDropout(h, count, n.dim, nil, false, 0, backend.Rand{}, nil, n.pre)
		n.ops.BatchNormStats(n.pre, count, n.dim, nil, nil, n.stats)
	default:
		n.ops.BatchNormStats(h, count, n.dim, bias, n.pre, n.stats)
	}
}

// inferAct normalises h (rows [:count], the layer's output with its bias)
// as evaluation does, into y through the activation a.
func (n *normLayer) inferAct(h backend.Buffer, count backend.Count, a normAct, y backend.Buffer) {
	var stats backend.Buffer
	if !n.perRow {
		stats = n.running.W
	}
	n.ops.NormApply(h, count, n.dim, n.perRow, stats, n.gamma.W, n.beta.W, normEps, a.relu, a.p, a.r, a.mask, y)
}

// backward writes dh (rows [:count]) with the gradient of the layer's
// output from dy, the gradient of the activation's output (act: the
// activation after the normalisation, forwardAct's; ActGrad{} when dy is
// the normalised output's own, and may be dh), and overwrites the scale's,
// shift's and the layer's bias's gradients. The activation's backward
// happens in the normalisation's own passes over the rows.
func (n *normLayer) backward(dy backend.Buffer, act backend.ActGrad, count backend.Count, dbias, dh backend.Buffer) {
	if n.sync == nil || n.perRow {
		n.ops.NormBackward(n.x, dy, count, n.dim, n.perRow, n.stats, n.gamma.W, normEps, act, dh, n.gamma.G, n.beta.G, dbias)
		return
	}
	if act.Relu || act.P > 0 || dy != dh { // the activation's backward (or a copy) into dh first
		n.be.BiasActDropoutBackward(dy, act.Y, count, n.dim, act.Relu, act.P, act.Mask, dh, nil)
	}
	// The scale's and shift's gradients are this rank's sums (the group
	// adds every parameter's gradient later); the input's needs the
	// group's.
	be := n.be
	n.ops.NormBackwardSums(n.x, dh, count, n.dim, n.stats, normEps, n.moments)
	be.Convert(be.View(n.moments, 0, n.dim), n.gamma.G)
	be.Convert(be.View(n.moments, n.dim, n.dim), n.beta.G)
	n.sync.AllReduceSum(n.moments)
	n.ops.NormBackwardApply(n.x, dh, count, n.dim, n.stats, n.gamma.W, normEps, n.moments, dh, dbias)
}

// SyncNorm makes every batch normalisation of the model (GIN's MLP's
// too) normalise by the statistics of all the rows of c's group in
// training, instead of this rank's rows alone: a training pass then
// all-reduces each one's moments, and its backward the sums its input
// gradient needs, so every rank of the group must run the same passes.
// Layer normalisation, per row, needs no group. A nil c turns it off.
func (m *Model) SyncNorm(c backend.Collective) {
	for l, n := range m.norms {
		for _, x := range []*normLayer{n, m.innerNorm(l)} {
			if x != nil && !x.perRow {
				x.sync = c
			}
		}
	}
}

// innerNorm is layer l's GIN MLP's normalisation, or nil.
func (m *Model) innerNorm(l int) *normLayer {
	if g, ok := m.layers[l].(*ginLayer); ok {
		return g.inner
	}
	return nil
}

// update folds the last training pass's batch statistics (their means
// plus the bias the pass left out) into the running ones, unless skip (an
// I32 flag) is set. It runs before the optimizer moves that bias.
func (n *normLayer) update(skip backend.Buffer) {
	if n.running == nil || !n.pending {
		return
	}
	n.ops.NormRunning(n.stats, n.bias, n.n, n.dim, normMomentum, n.running.W, skip)
	n.pending = false
}
