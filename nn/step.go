package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// CheckBatch reports whether b fits the reserved envelope: one block per
// layer whose capacities equal the reserved Caps, X of at least
// [Blocks[0].NumSrc.Cap, InDim] floats (or, without X, a Table of InDim-wide
// rows for a model that ReadsTable; with Tiered, for such a model only),
// Labels (when set) of at least the top
// destination capacity, and a degree table for GCN. It reads no device
// memory.
func (m *Model) CheckBatch(b *Batch) error {
	if m.hetero != nil {
		if b == nil {
			return fmt.Errorf("nn: batch: nil")
		}
		if err := m.hetero.check(b.Typed); err != nil {
			return err
		}
		if b.Labels != nil {
			return checkBuf("Labels", b.Labels, backend.I32, m.hetero.caps[m.cfg.Layers-1].Types[m.cfg.Target].Dst)
		}
		return nil
	}
	if m.caps == nil {
		return fmt.Errorf("nn: batch: Reserve has not been called")
	}
	if b == nil || len(b.Blocks) != m.cfg.Layers {
		n := 0
		if b != nil {
			n = len(b.Blocks)
		}
		return fmt.Errorf("nn: batch: %d blocks for %d layers", n, m.cfg.Layers)
	}
	for l, blk := range b.Blocks {
		if blk == nil {
			return fmt.Errorf("nn: batch: block %d is nil", l)
		}
		got := Caps{Dst: blk.NumDst.Cap, Edges: blk.NumEdges.Cap, Src: blk.NumSrc.Cap}
		if got != m.caps[l] {
			return fmt.Errorf("nn: batch: block %d has caps %+v, reserved %+v", l, got, m.caps[l])
		}
	}
	if err := m.checkInputs(b); err != nil {
		return err
	}
	if b.Labels != nil {
		if err := checkBuf("Labels", b.Labels, backend.I32, m.caps[m.cfg.Layers-1].Dst); err != nil {
			return err
		}
	}
	if m.cfg.needsDegree() {
		if err := checkBuf("Degree", b.Degree, backend.F32, 1); err != nil {
			return err
		}
	}
	return nil
}

// checkInputs checks the batch's features: X, a Table the model reads, or
// X with the Tiered store's cache.
func (m *Model) checkInputs(b *Batch) error {
	if b.Tiered != nil {
		if b.Table != nil {
			return fmt.Errorf("nn: batch: features given both as a table and in two tiers")
		}
		if err := m.checkTable("Tiered.Cache", b.Tiered.Cache, true); err != nil {
			return err
		}
		if b.Tiered.Ops == nil || b.Tiered.Slot == nil || b.Tiered.Slot.DType() != backend.I32 {
			return fmt.Errorf("nn: batch: Tiered needs the backend's tiered ops and an I32 slot table")
		}
	}
	if b.X != nil && b.X.DType() == backend.BF16 && m.ReadsBF16Rows() {
		return checkBuf("X", b.X, backend.BF16, m.caps[0].Src*m.cfg.InDim)
	}
	if b.X != nil || b.Table == nil {
		return checkBuf("X", b.X, backend.F32, m.caps[0].Src*m.cfg.InDim)
	}
	return m.checkTable("Table", b.Table, false)
}

// checkTable checks a table of input rows the bottom layer reads in place
// (nil allowed where nilOK: an empty cache).
func (m *Model) checkTable(name string, t backend.Buffer, nilOK bool) error {
	if !m.ReadsTable() {
		return fmt.Errorf("nn: batch: features given in place (%s), but %s's bottom layer (input dropout %v) needs gathered rows in X", name, m.cfg.Kind, m.cfg.InputDropout)
	}
	if t == nil && nilOK {
		return nil
	}
	if t == nil {
		return fmt.Errorf("nn: batch: %s is nil", name)
	}
	if dt := t.DType(); dt != backend.F32 && dt != backend.BF16 {
		return fmt.Errorf("nn: batch: %s is %s, want float32 or bfloat16", name, dt)
	}
	if t.Len()%m.cfg.InDim != 0 {
		return fmt.Errorf("nn: batch: %s has %d elements, not rows of %d", name, t.Len(), m.cfg.InDim)
	}
	return nil
}

func checkBuf(name string, b backend.Buffer, dt backend.DType, n int) error {
	if b == nil {
		return fmt.Errorf("nn: batch: %s is nil", name)
	}
	if b.DType() != dt || b.Len() < n {
		return fmt.Errorf("nn: batch: %s is %d x %s, want at least %d x %s", name, b.Len(), b.DType(), n, dt)
	}
	return nil
}

// Forward runs every layer on b and returns the logits, F32
// [Blocks[L-1].NumDst.Cap, Classes] owned by the model (rows past the live
// count are unspecified). With train set, hidden layers apply dropout with
// Philox stream 128+l of r's seed and clock. On a usage error (see Err) it
// issues nothing.
func (m *Model) Forward(b *Batch, train bool, r backend.Rand) backend.Buffer {
	if m.err != nil {
		return m.logits()
	}
	if m.hetero != nil {
		return m.forwardTyped(b, train, r)
	}
	if err := m.CheckBatch(b); err != nil {
		m.fail(fmt.Errorf("nn: Forward: %w", err))
		return m.logits()
	}
	if train && (m.cfg.Dropout > 0 || m.cfg.InputDropout > 0 || m.cfg.AttnDropout > 0) && r.Clock == nil {
		m.fail(fmt.Errorf("nn: Forward: dropout (%v, input %v, attention %v) needs a Rand with a clock",
			m.cfg.Dropout, m.cfg.InputDropout, m.cfg.AttnDropout))
		return m.logits()
	}
	L := m.cfg.Layers
	m.hot = nil
	if train {
		m.hot = b.Hot
	}
	if m.hot != nil && m.cfg.bf16Bottom() {
		m.fail(fmt.Errorf("nn: Forward: hot vertices need a float32 bottom layer; BF16Bottom is set"))
		return m.logits()
	}
	if h := m.hot; h != nil && h.Inputs() && !m.HotInputs() {
		m.fail(fmt.Errorf("nn: Forward: hot inputs need a bottom layer that aggregates before its product; %s's does not", m.cfg.Kind))
		return m.logits()
	}
	table := b.X == nil
	if table {
		m.xIn = b.Table
	} else {
		m.xIn = rows(m.be, b.X, m.caps[0].Src, m.cfg.InDim)
	}
	if train && m.cfg.InputDropout > 0 {
		// The bottom layer needs no input gradient, so the mask is not kept
		// for Backward; the layer's weight gradients read the dropped input.
		ri := r
		ri.Stream = inputDropoutStream
		ri.Keys = b.Blocks[0].SrcIDs // masks keyed by vertex id
		m.be.BiasActDropout(m.xIn, b.Blocks[0].NumSrc, m.cfg.InDim, nil, false, m.cfg.InputDropout, ri, m.xMask, m.xDrop)
		m.xIn = m.xDrop
	}
	if train {
		m.transposed = m.transposeBeside(b)
	}
	for l, ly := range m.layers {
		blk := b.Blocks[l]
		_, out := m.cfg.dims(l)
		ly.prepare(blk, b.Degree)
		ps := pass{train: train, rand: r, table: l == 0 && table}
		if l == 0 {
			ps.tiered = b.Tiered
		}
		if l == 0 && m.hot != nil && m.hot.Inputs() {
			ps.hot = m.hot
		}
		ly.forward(blk, m.input(l), m.act[l], ps)
		if l == 0 && m.hot != nil && !m.hot.Inputs() {
			m.hot.ReplaceOutputs(blk, out, m.act[0])
		}
		p := float32(0)
		if train && m.cfg.hiddenOut(l) {
			p = m.cfg.Dropout
		}
		m.dropP[l] = p
		rl := r
		rl.Stream = dropoutStream + uint32(l)
		rl.Keys = blk.SrcIDs // destination i is source i: masks keyed by vertex id
		var mask backend.Buffer
		if p > 0 {
			mask = m.mask[l]
		}
		bias, relu := ly.bias().W, m.cfg.hiddenOut(l)
		n := m.norms[l]
		switch {
		case n != nil && m.act[l].DType() == backend.F32 && m.hid[l].DType() == backend.F32:
			// The activation in the normalisation's pass.
			n.forwardAct(m.act[l], blk.NumDst, bias, train, normAct{relu: relu, p: p, r: rl, mask: mask}, m.hid[l])
		case n != nil:
			n.forward(m.act[l], blk.NumDst, bias, train)
			m.be.BiasActDropout(m.act[l], blk.NumDst, out, nil, relu, p, rl, mask, m.hid[l]) // the bias went before the normalisation
		default:
			m.be.BiasActDropout(m.act[l], blk.NumDst, out, bias, relu, p, rl, mask, m.hid[l])
		}
		if l == 0 && train && b.AfterBottom != nil {
			b.AfterBottom()
		}
	}
	if m.head != nil {
		m.head.forward(m.hid, b.Blocks[L-1].NumDst, m.cfg.Classes)
	}
	m.haveLoss = false
	return m.logits()
}

// gathers reports whether layer l's backward gathers its input gradient
// and passes it through layer l-1's activation (gatherer).
func (m *Model) gathers(l int) bool {
	if l <= 0 || l >= len(m.layers) || m.head.reads(l-1) {
		return false // (the head's share of layer l-1's output gradient is added before its activation's backward)
	}
	_, ok := m.layers[l].(gatherer)
	return ok
}

// transposeBeside issues the transposes of a training pass's blocks on the
// backend's second queue (backend.RunBeside), beside the forward pass that
// does not need them, and returns their mark (zero where there are none):
// Backward joins them at its start, and not what was put beside after them
// (Batch.AfterBottom's work).
func (m *Model) transposeBeside(b *Batch) backend.SideMark {
	var ls []int
	for l := 1; l < len(m.layers); l++ {
		if m.gathers(l) {
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		return 0
	}
	return backend.RunBeside(m.be, func() {
		for _, l := range ls {
			m.layers[l].(gatherer).transpose(b.Blocks[l])
		}
	})
}

// input is the input of layer l: the batch features or the previous output.
func (m *Model) input(l int) backend.Buffer {
	if l == 0 {
		return m.xIn
	}
	return m.xView[l]
}

func (m *Model) logits() backend.Buffer {
	if h := m.hetero; h != nil {
		switch {
		case h.act == nil:
			return nil
		case h.head != nil:
			return h.head.logits
		}
		return h.act[m.cfg.Layers-1][m.cfg.Target]
	}
	if m.act == nil {
		return nil
	}
	if m.head != nil {
		return m.head.logits
	}
	return m.act[len(m.act)-1]
}

// dlogits is the buffer that receives the gradient of the logits.
func (m *Model) dlogits() backend.Buffer {
	if h := m.hetero; h != nil {
		if h.head != nil {
			return h.head.dlogits
		}
		return h.dAct[m.cfg.Layers-1][m.cfg.Target]
	}
	if m.head != nil {
		return m.head.dlogits
	}
	return m.dAct[len(m.dAct)-1]
}

// Loss computes the mean softmax cross-entropy of logits (from Forward)
// against b.Labels over the live seeds, and the number of seeds whose argmax
// is the label. It returns the model-owned F32 [1] loss and I32 correct
// count, and keeps the gradient of the loss for Backward.
func (m *Model) Loss(b *Batch, logits backend.Buffer) (loss backend.Buffer, correct backend.Count) {
	if m.hetero != nil {
		return m.lossTyped(b, logits)
	}
	top := len(m.caps) - 1
	if m.caps != nil {
		correct = backend.Count{Buf: m.correct, Cap: m.caps[top].Dst}
	}
	if !m.lossReady(b) {
		return m.loss, correct
	}
	if logits == nil || logits.DType() != backend.F32 || logits.Len() < m.caps[top].Dst*m.cfg.Classes {
		m.fail(fmt.Errorf("nn: Loss: logits must be F32 [%d, %d]", m.caps[top].Dst, m.cfg.Classes))
		return m.loss, correct
	}
	var den backend.Count // the mean over this batch's seeds
	if sh := b.Share; sh != nil {
		den = sh.Den // one rank's share of the group's batch
	}
	m.be.SoftmaxCrossEntropy(logits, b.Labels, b.Blocks[top].NumDst, den, m.cfg.Classes, m.loss, m.dlogits(), correct)
	m.haveLoss = true
	return m.loss, correct
}

// lossReady reports whether Loss may go on with b: no earlier error, a
// batch that fits, with labels (failing the model otherwise).
func (m *Model) lossReady(b *Batch) bool {
	if m.err != nil {
		return false
	}
	if err := m.CheckBatch(b); err != nil {
		m.fail(fmt.Errorf("nn: Loss: %w", err))
		return false
	}
	if b.Labels == nil {
		m.fail(fmt.Errorf("nn: Loss: batch has no Labels"))
		return false
	}
	return true
}

// Backward propagates the gradient kept by Loss through every layer and
// overwrites every Param.G. b must be the batch of the last Forward.
func (m *Model) Backward(b *Batch) {
	if m.err != nil {
		return
	}
	if !m.haveLoss {
		m.fail(fmt.Errorf("nn: Backward: call Forward and Loss first"))
		return
	}
	if err := m.CheckBatch(b); err != nil {
		m.fail(fmt.Errorf("nn: Backward: %w", err))
		return
	}
	if m.hetero != nil {
		m.hetero.backward(b.Typed)
		m.haveLoss = false
		return
	}
	L := m.cfg.Layers
	backend.JoinBesideTo(m.be, m.transposed)
	m.transposed = 0
	if m.head != nil {
		m.head.backward(m.hid, b.Blocks[L-1].NumDst, m.cfg.Classes, m.dAct[L-1])
	}
	for l := L - 1; l >= 0; l-- {
		ly := m.layers[l]
		blk := b.Blocks[l]
		_, out := m.cfg.dims(l)
		dh := m.dz(l)
		if m.head.reads(l) {
			m.head.addLower(l, b.Blocks[L-1].NumDst, m.cfg.Classes, m.dAct[l])
		}
		// The gradient through this layer's activation, unless layer l+1's
		// backward passed it through (gathers), and its normalisation's.
		act := backend.ActGrad{Relu: m.cfg.hiddenOut(l), P: m.dropP[l], Y: m.hid[l], Mask: m.dropMask(l)}
		dy, gathered := m.dAct[l], m.gathers(l+1)
		if gathered {
			act, dy = backend.ActGrad{}, dh
		}
		if n := m.norms[l]; n != nil {
			n.backward(dy, act, blk.NumDst, ly.bias().G, dh) // the activation's backward in the normalisation's passes
		} else if !gathered {
			m.be.BiasActDropoutBackward(dy, act.Y, blk.NumDst, out, act.Relu, act.P, act.Mask, dh, ly.bias().G)
		}
		if l == 0 && m.hot != nil && !m.hot.Inputs() {
			m.hot.TakeGradient(blk, out, dh, b.Skip)
		}
		switch {
		case m.gathers(l):
			// The gradient of layer l-1's output goes straight through its
			// activation into the rows of its input to the product:
			// block l's sources are block l-1's destinations.
			in, _ := m.cfg.dims(l)
			act := backend.ActGrad{Relu: true, P: m.dropP[l-1], Y: m.xView[l], DBias: m.layers[l-1].bias().G}
			if m.norms[l-1] != nil {
				act.DBias = nil // the normalisation's backward writes it
			}
			if mask := m.dropMask(l - 1); mask != nil {
				act.Mask = rows(m.be, mask, m.caps[l].Src, in)
			}
			ly.(gatherer).backwardAct(blk, dh, act, rows(m.be, m.dz(l-1), m.caps[l].Src, in))
		case l > 0:
			ly.backward(blk, m.input(l), dh, m.dxView[l])
		default:
			ly.backward(blk, m.input(l), dh, nil)
		}
		if l == 0 && m.hot != nil && !m.hot.Inputs() {
			m.joinBesideWork()
			var grads []backend.Buffer
			for _, p := range m.LayerWeights(0) {
				grads = append(grads, p.G)
			}
			m.hot.AddWeightGradient(grads)
		}
	}
	m.joinBesideWork()
	m.haveLoss = false // dlogits were consumed in place
}

// dz is the buffer that receives the gradient before layer l's activation:
// dAct[l] (in place), or for a bfloat16 bottom layer its rounded copy.
func (m *Model) dz(l int) backend.Buffer {
	if l == 0 && m.dHalf != nil {
		return m.dHalf // rounded for the bfloat16 weight gradient
	}
	return m.dAct[l]
}

// dropMask is layer l's dropout mask, nil when its last pass dropped
// nothing.
func (m *Model) dropMask(l int) backend.Buffer {
	if m.dropP[l] > 0 {
		return m.mask[l]
	}
	return nil
}

// Update applies one Adam step to every parameter; t is the device step
// counter (1-based, incremented by the caller before the call). Weight decay
// (L2, added to the gradient) applies to weights and biases alike. After a
// usage error (see Err) it issues nothing.
func (m *Model) Update(t backend.Count, cfg backend.AdamConfig) {
	if m.err != nil {
		return
	}
	// The running statistics first: a normalisation's may add the bias
	// of the pass (normLayer.update), which Adam then moves.
	for l, n := range m.norms {
		for _, x := range []*normLayer{m.innerNorm(l), n} {
			if x != nil {
				x.update(cfg.Skip)
			}
		}
	}
	if m.hetero != nil {
		m.hetero.updateNorms(cfg.Skip)
	}
	for _, p := range m.Params() {
		if !p.Buffer {
			m.be.Adam(p.W, p.G, p.M, p.V, t, cfg)
		}
	}
}
