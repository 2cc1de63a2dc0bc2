package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Model's methods for a typed model: reserving its envelope, and its
// forward pass and loss, which delegate to heteroNet (hetero_step.go).

// ReserveTyped allocates a typed model's workspaces for the envelope caps
// (one per layer, bottom first), as Reserve does a one-type model's.
func (m *Model) ReserveTyped(caps []LayerCaps) error {
	if m.hetero == nil {
		return fmt.Errorf("nn: ReserveTyped: %s is not a typed model", m.cfg.Kind)
	}
	m.haveLoss = false
	return m.hetero.reserve(caps)
}

// TypedCaps is the envelope a typed model was reserved for.
func (m *Model) TypedCaps() []LayerCaps {
	if m.hetero == nil {
		return nil
	}
	return m.hetero.caps
}

// forwardTyped is Forward of a typed model.
func (m *Model) forwardTyped(b *Batch, train bool, r backend.Rand) backend.Buffer {
	if err := m.CheckBatch(b); err != nil {
		m.fail(fmt.Errorf("nn: Forward: %w", err))
		return m.logits()
	}
	if train && (m.cfg.Dropout > 0 || m.cfg.AttnDropout > 0) && r.Clock == nil {
		m.fail(fmt.Errorf("nn: Forward: dropout %v (attention %v) needs a Rand with a clock", m.cfg.Dropout, m.cfg.AttnDropout))
		return m.logits()
	}
	return m.hetero.forward(b.Typed, train, r, b.AfterBottom)
}

// lossTyped is Loss of a typed model: the target type's seeds.
func (m *Model) lossTyped(b *Batch, logits backend.Buffer) (backend.Buffer, backend.Count) {
	h, top := m.hetero, m.cfg.Layers-1
	var correct backend.Count
	if h.caps != nil {
		correct = backend.Count{Buf: h.correct, Cap: h.caps[top].Types[m.cfg.Target].Dst}
	}
	if !m.lossReady(b) {
		return h.loss, correct
	}
	var den backend.Count
	if sh := b.Share; sh != nil {
		den = sh.Den
	}
	m.be.SoftmaxCrossEntropy(logits, b.Labels, b.Typed.Dst[top][m.cfg.Target], den, m.cfg.Classes, h.loss, m.dlogits(), correct)
	m.haveLoss = true
	return h.loss, correct
}

// TypedOutput is a typed model's output of type t at layer l after its
// last Forward (F32 [the type's destinations, width], the seeds' rows
// first), or nil for a one-type model.
func (m *Model) TypedOutput(l, t int) backend.Buffer {
	if h := m.hetero; h != nil && h.act != nil {
		return h.act[l][t]
	}
	return nil
}
