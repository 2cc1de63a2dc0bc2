package link

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// evalCase is a trained link trainer, its head with chunks of three
// positives (so that a set spans many chunks, the last one short), and
// every vertex's embedding in backend memory and on the host.
type evalCase struct {
	tr  *train.Trainer
	h   *head
	tab backend.Buffer
	emb []float32
}

// newEvalCase trains cfg on be and embeds every vertex.
func newEvalCase(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config) evalCase {
	t.Helper()
	tr := newTrainer(t, be, ds, cfg, train.Options{})
	if _, err := tr.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	h, err := headOf(tr)
	if err != nil {
		t.Fatal(err)
	}
	k := h.ds.Link.Negatives
	if cfg.Link.EvalNegatives > 0 {
		k = cfg.Link.EvalNegatives
	}
	h.evalChunk = 3 * 4 * (1 + k) * (h.dim + h.dec.hiddenWidth())
	tab, err := tr.OutputTable()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Free(tab) })
	emb := make([]float32, tab.Len())
	be.Read(emb, tab, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return evalCase{tr: tr, h: h, tab: tab, emb: emb}
}

// deviceRanked scores a set on the backend and returns its metrics, and
// the scores it ranked, read back in the host's order (positives, then
// positive i's negatives at i·k).
func (c evalCase) deviceRanked(t *testing.T, set train.Split) (m Metrics, pos, neg []float64) {
	t.Helper()
	ho, err := c.h.evalSet(set)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.h.newDeviceSet(ho)
	defer d.free()
	if err == nil {
		err = d.score(t.Context(), c.tab)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d.chunks < 3 {
		t.Fatalf("%d chunks of %d positives, want several", d.chunks, d.per)
	}
	all := make([]float32, d.scores.Len())
	c.h.be.Read(all, d.scores, 0)
	for q := range d.pos {
		ch, i := q/d.per, q%d.per
		b := min(d.pos-ch*d.per, d.per)
		at := ch * d.per * (1 + d.k)
		pos = append(pos, float64(all[at+i]))
		for j := range d.k {
			neg = append(neg, float64(all[at+b+i*d.k+j]))
		}
	}
	if m, err = d.metrics(t.Context()); err != nil {
		t.Fatal(err)
	}
	return m, pos, neg
}

// sameMetrics reports how a and b differ beyond a relative tol ("" when
// they agree).
func sameMetrics(a, b Metrics, tol float64) string {
	x := append([]float64{a.AUC, a.AP, a.MRR}, a.Hits...)
	y := append([]float64{b.AUC, b.AP, b.MRR}, b.Hits...)
	if len(x) != len(y) {
		return fmt.Sprintf("%d figures, %d", len(x), len(y))
	}
	for i := range x {
		if !(math.Abs(x[i]-y[i]) <= tol*max(math.Abs(y[i]), 1e-300)) {
			return fmt.Sprintf("%+v against %+v", a, b)
		}
	}
	return ""
}

// checkDeviceEval: the device's metrics of each held-out set equal the
// host's count of the device's own scores exactly (PairRanks,
// LevelCounts and the levels are the host's ranks), its scores are the
// host twin's float64 scores within float32 rounding, and (exact, where
// the backend scores in float32 as the CPU's does) the host twin's
// metrics; negatives drawn at evaluation hold ties with their positive
// (a draw of its own destination).
func checkDeviceEval(t *testing.T, c evalCase, exact bool) {
	drawn := c.tr.Config().Link.EvalNegatives > 0
	hd := c.h.dec.host()
	for _, set := range []train.Split{train.Valid, train.Test} {
		dev, pos, neg := c.deviceRanked(t, set)
		ho, _ := c.h.evalSet(set)
		if own, err := ScoreContext(t.Context(), pos, neg, ho.k); err != nil || sameMetrics(dev, own, 0) != "" {
			t.Errorf("%s: the device's metrics %+v, the host's of the same scores %+v (%v)", set, dev, own, err)
		}
		hostPos, hostNeg := scorePairs(c.emb, c.h.dim, hd, ho.pos), scorePairs(c.emb, c.h.dim, hd, ho.neg)
		ties, scale := 0, 0.0
		for _, s := range append(hostPos, hostNeg...) {
			scale = max(scale, math.Abs(s))
		}
		for i, s := range append(hostPos, hostNeg...) {
			d := append(pos, neg...)[i]
			if !(math.Abs(d-s) <= 1e-5*scale) {
				t.Fatalf("%s: score %d is %v on the device, %v on the host", set, i, d, s)
			}
			if i >= len(hostPos) && s == hostPos[(i-len(hostPos))/ho.k] {
				ties++
			}
		}
		host, err := c.h.scoreHost(t.Context(), c.emb, hd, set)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: device %+v, host %+v, %d ties with the positive", set, dev, host, ties)
		if distinct := len(slices.Compact(slices.Sorted(slices.Values(hostNeg)))); distinct < len(hostNeg)/2 || (drawn && ties == 0) {
			t.Errorf("%s: %d distinct of %d negative scores, %d ties with the positive: want spread scores, and ties where negatives are drawn", set, distinct, len(hostNeg), ties)
		}
		if diff := sameMetrics(dev, host, 1e-12); exact && diff != "" {
			t.Errorf("%s: device and host metrics differ: %s", set, diff)
		}
	}
}

// TestDeviceEvalMatchesHost: on the CPU backend, the evaluation through
// the link ops (in chunks of three positives) gives the host twin's
// metrics, for both decoders, against the dataset's stored negatives
// and against 40 drawn at evaluation.
func TestDeviceEvalMatchesHost(t *testing.T) {
	ds := ringData(t, 400)
	for _, dec := range []string{train.DecoderDot, train.DecoderMLP} {
		for _, k := range []int{0, 40} {
			t.Run(fmt.Sprintf("%s/eval-negatives=%d", dec, k), func(t *testing.T) {
				cfg := ringConfig()
				cfg.Epochs, cfg.Link.Decoder, cfg.Link.EvalNegatives = 2, dec, k
				if dec == train.DecoderDot {
					cfg.Link.DecoderWidth = 0
				}
				checkDeviceEval(t, newEvalCase(t, cpu.New(2), ds, cfg), true)
			})
		}
	}
}

// TestDeviceEvalNotFinite: an embedding that is not finite (a diverged
// model's) makes the device's evaluation the host's error, counting the
// same scores.
func TestDeviceEvalNotFinite(t *testing.T) {
	cfg := ringConfig()
	cfg.Epochs, cfg.Link.EvalNegatives = 1, 40
	c := newEvalCase(t, cpu.New(2), ringData(t, 400), cfg)
	ho, _ := c.h.evalSet(train.Valid)
	v := int(ho.neg[1]) // the first negative's destination
	nan := float32(math.NaN())
	for j := range c.h.dim {
		c.emb[v*c.h.dim+j] = nan
	}
	c.h.be.Write(c.tab, v*c.h.dim, c.emb[v*c.h.dim:(v+1)*c.h.dim])
	_, want := c.h.scoreHost(t.Context(), c.emb, c.h.dec.host(), train.Valid)
	_, got := c.h.scoreDevice(t.Context(), c.tab, train.Valid)
	if want == nil || got == nil || got.Error() != want.Error() || !strings.Contains(got.Error(), "not finite") {
		t.Errorf("device: %v\nhost: %v", got, want)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.h.scoreDevice(ctx, c.tab, train.Test); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("a cancelled evaluation: %v", err)
	}
}
