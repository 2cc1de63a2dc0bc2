package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// reserve allocates the typed layers' workspaces for the envelope caps
// (one per layer, bottom first).
func (h *heteroNet) reserve(caps []LayerCaps) error {
	c := h.cfg
	T, R, L := len(c.Types), len(c.Relations), c.Layers
	if len(caps) != L {
		return fmt.Errorf("nn: ReserveTyped: %d layers' caps for %d layers", len(caps), L)
	}
	for l, lc := range caps {
		if len(lc.Types) != T || len(lc.Edges) != R {
			return fmt.Errorf("nn: ReserveTyped: layer %d has caps of %d types and %d relations, the model %d and %d", l, len(lc.Types), len(lc.Edges), T, R)
		}
		for t, tc := range lc.Types {
			if tc.Dst < 0 || tc.Src < tc.Dst || (l > 0 && tc.Src > caps[l-1].Types[t].Dst) {
				return fmt.Errorf("nn: ReserveTyped: layer %d type %s: caps %+v (sources first destinations, at most the layer below's destinations)", l, c.Types[t].Name, tc)
			}
		}
	}
	h.ws.release()
	h.caps = append([]LayerCaps(nil), caps...)
	h.act, h.dAct, h.mask = grid[backend.Buffer](L, T), grid[backend.Buffer](L, T), grid[backend.Buffer](L, T)
	for l, lc := range caps {
		for t, tc := range lc.Types {
			_, out := c.typeDims(l, t)
			h.act[l][t] = h.ws.alloc(fmt.Sprintf("layer %d %s outputs", l, c.Types[t].Name), backend.F32, tc.Dst*out)
			h.dAct[l][t] = h.ws.allocRows(fmt.Sprintf("layer %d %s output gradients", l, c.Types[t].Name), backend.F32, tc.Dst*out)
			if c.hiddenOut(l) && c.Dropout > 0 {
				h.mask[l][t] = h.ws.alloc(fmt.Sprintf("layer %d %s dropout mask", l, c.Types[t].Name), backend.U8, tc.Dst*out)
			}
			if n := h.norm(l, t); n != nil {
				n.reserve(&h.ws, fmt.Sprintf("layer %d %s normalisation", l, c.Types[t].Name), tc.Dst, true) // in place
			}
		}
	}
	if c.Kind == KindRGAT {
		h.reserveGAT(caps)
	} else {
		h.reserveMeans(caps)
	}
	if c.Bases > 0 {
		h.basisW = make([]backend.Buffer, L)
		largest := 0
		for l := range L {
			in, out := c.typeDims(l, 0)
			h.basisW[l] = h.ws.alloc(fmt.Sprintf("layer %d relation weights from bases", l), backend.F32, R*in*out)
			largest = max(largest, R*in*out)
		}
		h.basisG = h.ws.alloc("relation weight gradients", backend.F32, largest)
		h.relCount = h.ws.count("relation count", R)
	}
	if h.head != nil {
		h.head.reserve(&h.ws, caps[L-1].Types[c.Target].Dst, c.Classes)
	}
	h.loss = h.ws.alloc("loss", backend.F32, 1)
	h.correct = h.ws.alloc("correct count", backend.I32, 1)
	if h.ws.err != nil {
		return h.ws.err
	}
	h.zeroDead()
	return nil
}

// reserveMeans allocates RSAGE's and RGCN's per-relation state for caps:
// the edge weights and the neighbour means, and one relation's mean
// gradient at a time.
func (h *heteroNet) reserveMeans(caps []LayerCaps) {
	c := h.cfg
	h.edgeW, h.agg = grid[backend.Buffer](c.Layers, len(c.Relations)), grid[backend.Buffer](c.Layers, len(c.Relations))
	biggest := 0
	for l, lc := range caps {
		for r, rel := range c.Relations {
			inS, _ := c.typeDims(l, rel.Src)
			n := lc.Types[rel.Dst].Dst * inS
			h.edgeW[l][r] = h.ws.alloc(fmt.Sprintf("layer %d %s edge weights", l, rel.Name), backend.F32, lc.Edges[r])
			h.agg[l][r] = h.ws.allocRows(fmt.Sprintf("layer %d %s neighbour means", l, rel.Name), backend.F32, n)
			biggest = max(biggest, n)
		}
	}
	h.dAgg = h.ws.allocRows("neighbour mean gradients", backend.F32, biggest)
}

// zeroDead zeroes the gradients of the parameters that make rows of types
// without rows in the envelope (the top layer's types other than the
// target, ...): Backward never writes them, and Adam reads them.
func (h *heteroNet) zeroDead() {
	c := h.cfg
	for l, ly := range h.layers {
		for t := range c.Types {
			if h.live(l, t) {
				continue
			}
			var ps []*Param
			for _, r := range c.relsInto(t) {
				ps = append(ps, ly.rels[r].params()...)
			}
			if ly.root != nil {
				ps = append(ps, ly.root[t], ly.tbias[t])
			}
			if n := h.norm(l, t); n != nil {
				ps = append(ps, n.gamma, n.beta)
			}
			for _, p := range ps {
				if p != nil {
					h.be.Fill(p.G, 0)
				}
			}
		}
	}
}

// grid makes an [n][m] table.
func grid[T any](n, m int) [][]T {
	g := make([][]T, n)
	for i := range g {
		g[i] = make([]T, m)
	}
	return g
}

// check reports whether b fits the reserved envelope.
func (h *heteroNet) check(b *TypedBatch) error {
	c := h.cfg
	if h.caps == nil {
		return fmt.Errorf("nn: batch: ReserveTyped has not been called")
	}
	if b == nil || len(b.Rels) != c.Layers || len(b.Dst) != c.Layers || len(b.Src) != c.Layers || len(b.X) != len(c.Types) {
		return fmt.Errorf("nn: batch: a typed model needs a TypedBatch of %d layers and %d types' inputs", c.Layers, len(c.Types))
	}
	for l, lc := range h.caps {
		for r, blk := range b.Rels[l] {
			if blk == nil || blk.NumEdges.Cap != lc.Edges[r] || blk.NumDst.Cap != lc.Types[c.Relations[r].Dst].Dst {
				return fmt.Errorf("nn: batch: layer %d relation %s does not match the reserved caps", l, c.Relations[r].Name)
			}
		}
		for t, tc := range lc.Types {
			if b.Dst[l][t].Cap != tc.Dst || b.Src[l][t].Cap != tc.Src {
				return fmt.Errorf("nn: batch: layer %d type %s has caps %d/%d, reserved %+v", l, c.Types[t].Name, b.Dst[l][t].Cap, b.Src[l][t].Cap, tc)
			}
		}
	}
	for t, x := range b.X {
		if err := checkBuf("X["+c.Types[t].Name+"]", x, backend.F32, h.caps[0].Types[t].Src*c.Types[t].InDim); err != nil {
			return err
		}
	}
	return nil
}

// input is type t's input rows at layer l: the batch's X at the bottom,
// the layer below's outputs above it.
func (h *heteroNet) input(b *TypedBatch, l, t int) backend.Buffer {
	if l == 0 {
		return b.X[t]
	}
	return h.act[l-1][t]
}

// inputGrad is where the gradient of type t's input rows at layer l goes:
// the layer below's output gradient, or at the bottom the batch's DX (nil:
// not wanted).
func (h *heteroNet) inputGrad(b *TypedBatch, l, t int) backend.Buffer {
	if l > 0 {
		return h.dAct[l-1][t]
	}
	if b.DX != nil {
		return b.DX[t]
	}
	return nil
}

// relWeight is relation r's neighbour weight at layer l (made from the
// bases with them) and its gradient.
func (h *heteroNet) relWeight(l, r int) (w, g backend.Buffer) {
	if p := h.layers[l].rels[r].neigh; p != nil {
		return p.W, p.G
	}
	in, out := h.cfg.typeDims(l, h.cfg.Relations[r].Src)
	return h.be.View(h.basisW[l], r*in*out, in*out), h.be.View(h.basisG, r*in*out, in*out)
}

// forward runs every layer and returns the target type's top outputs (the
// logits).
func (h *heteroNet) forward(b *TypedBatch, train bool, rnd backend.Rand, afterBottom func()) backend.Buffer {
	c, be := h.cfg, h.be
	h.training = train
	h.attnP, h.attnR = 0, backend.Rand{}
	if train && c.AttnDropout > 0 {
		h.attnP, h.attnR = c.AttnDropout, rnd
	}
	for l, ly := range h.layers {
		h.dropP[l] = 0
		if train && c.hiddenOut(l) {
			h.dropP[l] = c.Dropout
		}
		if ly.bases != nil {
			in, out := c.typeDims(l, 0)
			be.Linear(ly.comp.W, h.relCount, ly.bases.W, c.Bases, in*out, h.basisW[l], false)
		}
		for r, rel := range c.Relations {
			if h.edgeW != nil && h.live(l, rel.Dst) { // RGAT weighs edges by attention
				be.MeanWeights(b.Rels[l][r], h.edgeW[l][r])
			}
		}
		for t := range c.Types {
			if rs := c.relsInto(t); len(rs) > 0 && h.live(l, t) {
				h.forwardType(b, l, t, rs, rnd)
			}
		}
		if l == 0 && train && afterBottom != nil {
			afterBottom()
		}
	}
	if h.head != nil {
		h.head.forward(h.targetOutputs(), b.Dst[c.Layers-1][c.Target], c.Classes)
		return h.head.logits
	}
	return h.act[c.Layers-1][c.Target]
}

// targetOutputs are the target type's outputs of every layer (the
// jumping knowledge head's input).
func (h *heteroNet) targetOutputs() []backend.Buffer {
	out := make([]backend.Buffer, h.cfg.Layers)
	for l := range out {
		out[l] = h.act[l][h.cfg.Target]
	}
	return out
}

// forwardType writes type t's outputs at layer l: the relations rs into
// it (summed), their biases, then normalisation, ReLU and dropout below
// the top.
func (h *heteroNet) forwardType(b *TypedBatch, l, t int, rs []int, rnd backend.Rand) {
	if h.cfg.Kind == KindRGAT {
		h.gatMessages(b, l, t, rs)
	} else {
		h.messages(b, l, t, rs)
	}
	h.finish(b, l, t, rs, rnd)
}

// messages writes RSAGE's or RGCN's sum over the relations rs into type t
// at layer l (before any bias) into its outputs.
func (h *heteroNet) messages(b *TypedBatch, l, t int, rs []int) {
	c, be, ly := h.cfg, h.be, h.layers[l]
	n, y := b.Dst[l][t], h.act[l][t]
	inT, out := c.typeDims(l, t)
	xT := h.input(b, l, t)
	acc := false
	if ly.root != nil {
		be.Linear(xT, n, ly.root[t].W, inT, out, y, false)
		acc = true
	}
	for _, r := range rs {
		s := c.Relations[r].Src
		inS, _ := c.typeDims(l, s)
		if w := ly.rels[r].self; w != nil {
			be.Linear(xT, n, w.W, inT, out, y, acc)
			acc = true
		}
		be.Aggregate(b.Rels[l][r], h.edgeW[l][r], nil, h.input(b, l, s), inS, h.agg[l][r])
		w, _ := h.relWeight(l, r)
		be.Linear(h.agg[l][r], n, w, inS, out, y, acc)
		acc = true
	}
}

// biases are the biases added to type t's outputs at layer l, the last one
// with the activation: RGCN's type bias, or each relation's into it.
func (h *heteroNet) biases(l, t int, rs []int) []*Param {
	ly := h.layers[l]
	if ly.tbias != nil {
		return []*Param{ly.tbias[t]}
	}
	var ps []*Param
	for _, r := range rs {
		ps = append(ps, ly.rels[r].bias)
	}
	return ps
}

// finish adds type t's biases to its outputs at layer l, then normalises
// them and applies ReLU and dropout below the top.
func (h *heteroNet) finish(b *TypedBatch, l, t int, rs []int, rnd backend.Rand) {
	c, be := h.cfg, h.be
	n, y := b.Dst[l][t], h.act[l][t]
	_, out := c.typeDims(l, t)
	biases := h.biases(l, t, rs)
	for _, p := range biases[:len(biases)-1] {
		be.BiasActDropout(y, n, out, p.W, false, 0, backend.Rand{}, nil, y)
	}
	last := biases[len(biases)-1].W
	if nm := h.norm(l, t); nm != nil {
		nm.forward(y, n, last, h.training)
		last = nil // added before the normalisation
	}
	// Layer l's dropout stream, as a one-type model's; each type its own
	// seed.
	dr := backend.Rand{Seed: rng.Derive(rnd.Seed, t+1), Clock: rnd.Clock, Stream: dropoutStream + uint32(l)}
	be.BiasActDropout(y, n, out, last, c.hiddenOut(l), h.dropP[l], dr, h.dropMask(l, t), y)
}

// live reports whether type t has destinations at layer l (the envelope
// gives types that no path reaches the seeds from none: their rows, and
// the relations into them, are skipped).
func (h *heteroNet) live(l, t int) bool { return h.caps[l].Types[t].Dst > 0 }

// dropMask is type t's dropout mask at layer l, nil where the last pass
// dropped nothing.
func (h *heteroNet) dropMask(l, t int) backend.Buffer {
	if h.dropP[l] > 0 {
		return h.mask[l][t]
	}
	return nil
}

// backward propagates the loss's gradient (in dAct[top][target]) through
// every layer into every parameter's gradient and the batch's DX.
func (h *heteroNet) backward(b *TypedBatch) {
	c, be := h.cfg, h.be
	top, seeds := c.Layers-1, b.Dst[c.Layers-1][c.Target]
	if h.head != nil {
		h.head.backward(h.targetOutputs(), seeds, c.Classes, h.dAct[top][c.Target])
	}
	for l := c.Layers - 1; l >= 0; l-- {
		if h.head.reads(l) {
			// The head's share of the seeds' rows of the target's output.
			h.head.addLower(l, seeds, c.Classes, h.dAct[l][c.Target])
		}
		for t := range c.Types {
			if g := h.inputGrad(b, l, t); g != nil {
				be.Fill(g, 0)
			}
		}
		if h.layers[l].bases != nil {
			be.Fill(h.basisG, 0) // the relations into types without rows here add nothing
		}
		for t := range c.Types {
			if rs := c.relsInto(t); len(rs) > 0 && h.live(l, t) {
				h.backwardType(b, l, t, rs)
			}
		}
		if ly := h.layers[l]; ly.bases != nil {
			in, out := c.typeDims(l, 0)
			R := h.relCount
			g := be.View(h.basisG, 0, len(c.Relations)*in*out)
			be.LinearBackwardWeight(ly.comp.W, g, R, c.Bases, in*out, ly.bases.G, false)
			be.LinearBackwardData(g, R, ly.bases.W, c.Bases, in*out, ly.comp.G, false)
		}
	}
}

// backwardType is forwardType's backward: the bias, activation and
// dropout (their gradient in place of dAct), then the relations' (and
// roots') weight gradients and the inputs' gradients, added into theirs.
func (h *heteroNet) backwardType(b *TypedBatch, l, t int, rs []int) {
	h.finishBackward(b, l, t, rs)
	if h.cfg.Kind == KindRGAT {
		h.gatMessagesBackward(b, l, t, rs)
	} else {
		h.messagesBackward(b, l, t, rs)
	}
}

// finishBackward is finish's backward: the gradient before the bias,
// normalisation, activation and dropout replaces type t's output gradient
// at layer l, and every bias added to the rows gets the same gradient.
func (h *heteroNet) finishBackward(b *TypedBatch, l, t int, rs []int) {
	c, be := h.cfg, h.be
	n, dz := b.Dst[l][t], h.dAct[l][t]
	_, out := c.typeDims(l, t)
	biases := h.biases(l, t, rs)
	dbias := biases[len(biases)-1]
	if nm := h.norm(l, t); nm != nil {
		// The gradient before the activation and the normalisation, and the bias's.
		act := backend.ActGrad{Relu: c.hiddenOut(l), P: h.dropP[l], Y: h.act[l][t], Mask: h.dropMask(l, t)}
		nm.backward(dz, act, n, dbias.G, dz)
	} else {
		be.BiasActDropoutBackward(dz, h.act[l][t], n, out, c.hiddenOut(l), h.dropP[l], h.dropMask(l, t), dz, dbias.G)
	}
	for _, p := range biases[:len(biases)-1] {
		be.Convert(dbias.G, p.G) // every bias adds to the same rows
	}
}

// messagesBackward is messages' backward: each product's weight gradient
// and the inputs' gradients, added into theirs, from type t's gradient
// before its biases at layer l.
func (h *heteroNet) messagesBackward(b *TypedBatch, l, t int, rs []int) {
	c, be, ly := h.cfg, h.be, h.layers[l]
	n, dz := b.Dst[l][t], h.dAct[l][t]
	inT, out := c.typeDims(l, t)
	xT, dxT := h.input(b, l, t), h.inputGrad(b, l, t)
	if ly.root != nil {
		be.LinearBackwardWeight(xT, dz, n, inT, out, ly.root[t].G, false)
		if dxT != nil {
			be.LinearBackwardData(dz, n, ly.root[t].W, inT, out, dxT, true)
		}
	}
	for _, r := range rs {
		if w := ly.rels[r].self; w != nil {
			be.LinearBackwardWeight(xT, dz, n, inT, out, w.G, false)
			if dxT != nil {
				be.LinearBackwardData(dz, n, w.W, inT, out, dxT, true)
			}
		}
		s := c.Relations[r].Src
		inS, _ := c.typeDims(l, s)
		wr, gr := h.relWeight(l, r)
		be.LinearBackwardWeight(h.agg[l][r], dz, n, inS, out, gr, false)
		if dxS := h.inputGrad(b, l, s); dxS != nil {
			dAgg := h.be.View(h.dAgg, 0, h.agg[l][r].Len())
			be.LinearBackwardData(dz, n, wr, inS, out, dAgg, false)
			be.AggregateBackward(b.Rels[l][r], h.edgeW[l][r], nil, dAgg, inS, dxS)
		}
	}
}
