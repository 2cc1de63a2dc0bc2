package link

import (
	"context"
	"fmt"

	"github.com/fanout-gnn/fanout/train"
)

// The figures of a link evaluation (train.Metrics keys).
const (
	MetricAUC = "auc" // ROC-AUC of the positives against every negative
	MetricAP  = "ap"  // average precision
	MetricMRR = "mrr" // each positive ranked among its own negatives
	// MetricMRRDegree is the MRR of a scorer that knows only the training
	// graph's degrees, deg(u)·deg(v): the baseline the model must beat
	// to have learnt more than a vertex's degree.
	MetricMRRDegree = "mrr_degree"
)

// hitsKey is the key of Hits@at.
func hitsKey(at int) string { return fmt.Sprintf("hits@%d", at) }

// MetricKeys are the figures Evaluate reports, in print order.
func (h *head) MetricKeys() []string {
	keys := []string{MetricAUC, MetricAP, MetricMRR}
	for _, at := range HitsAt() {
		keys = append(keys, hitsKey(at))
	}
	return append(keys, MetricMRRDegree)
}

// Figures are m as a train.Metrics.
func (m Metrics) Figures() train.Metrics {
	f := train.Metrics{MetricAUC: m.AUC, MetricAP: m.AP, MetricMRR: m.MRR}
	for i, v := range m.Hits {
		f[hitsKey(HitsAt()[i])] = v
	}
	return f
}

// Evaluate embeds every vertex with the current model into backend
// memory (train.Trainer's OutputTable) and ranks the split's held-out
// edges against their negatives there (scoreDevice).
func (h *head) Evaluate(ctx context.Context, s train.Split) (train.Metrics, error) {
	tab, err := h.t.OutputTable()
	if err != nil {
		return nil, err
	}
	defer h.be.Free(tab)
	m, err := h.scoreDevice(ctx, tab, s)
	if err != nil {
		return nil, err
	}
	ho, err := h.evalSet(s)
	if err != nil {
		return nil, err
	}
	f := m.Figures()
	f[MetricMRRDegree] = ho.degreeMRR
	return f, nil
}

// scoreHost computes a held-out set's metrics from every vertex's
// embedding on the host (emb, flat [N, dim]), scored in float64:
// scoreDevice's twin.
func (h *head) scoreHost(ctx context.Context, emb []float32, hd *hostDecoder, set train.Split) (Metrics, error) {
	ho, err := h.evalSet(set)
	if err != nil {
		return Metrics{}, err
	}
	m, err := ScoreContext(ctx, scorePairs(emb, h.dim, hd, ho.pos), scorePairs(emb, h.dim, hd, ho.neg), ho.k)
	if err != nil {
		return m, fmt.Errorf("link: the %s set: %w", set, err)
	}
	return m, nil
}
