package train

import (
	"context"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/nn"
)

// TestTypedEnvelopeTightens: the replayed typed plan is sized by the
// first steps' largest sizes, below the conservative envelope; observed
// over one step at margin 1 later batches overflow it, the envelope grows
// and the run still equals the eager one bit for bit.
func TestTypedEnvelopeTightens(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cfg.Epochs = 3
	wantLoss, wantParams := eagerRun(t, cpu.New(2), ds, cfg)
	var losses []float32
	tr, err := New(record.New(cpu.New(2)), ds, cfg, Options{OnStep: func(_, _ int, l float32) { losses = append(losses, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	mem := backend.MemoryOf(tr.be)
	var captured int64
	before := func(EnvelopeReport) error { mem.ResetPeak(); captured = mem.InUseBytes(); return nil }
	_, st, err := tr.RunReplay(context.Background(), ReplayOptions{Observe: 1, Margin: 1, BeforeCapture: before})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "replay at a tightened envelope", losses, wantLoss, params(t, tr), wantParams)
	if st.Overflows == 0 || st.Captures < 2 {
		t.Errorf("no step overflowed an envelope observed over one step: %+v", st)
	}
	// The growths sampled on the training plan itself: past the first
	// capture the run never held a plan at the conservative envelope
	// beside its own.
	grown, inUse := mem.PeakBytes()-captured, mem.InUseBytes()
	sampler, err := tr.conservativeSampler()
	if err != nil {
		t.Fatal(err)
	}
	consBytes := mem.InUseBytes() - inUse
	sampler.Free()
	t.Logf("after the first capture the run held at most %d bytes more; a conservative sampling plan holds %d", grown, consBytes)
	if grown >= consBytes {
		t.Errorf("the growths held %d bytes more than at the first capture, a conservative sampling plan's %d or more", grown, consBytes)
	}
	cons, _, err := tr.typedCaps()
	if err != nil {
		t.Fatal(err)
	}
	sum := func(c nn.LayerCaps) (src, edges int) {
		for _, ty := range c.Types {
			src += ty.Src
		}
		for _, e := range c.Edges {
			edges += e
		}
		return src, edges
	}
	got := tr.plan.Typed.Caps
	for l := range cons {
		gs, ge := sum(got[l])
		cs, ce := sum(cons[l])
		if gs > cs || ge > ce {
			t.Errorf("layer %d: %d sources and %d edges, above the conservative %d and %d", l, gs, ge, cs, ce)
		}
		if l == 0 && !(gs < cs) {
			t.Errorf("bottom layer: %d sources, not below the conservative %d", gs, cs)
		}
		t.Logf("layer %d: sources %d (conservative %d), edges %d (conservative %d)", l, gs, cs, ge, ce)
	}
}

// TestTypedObserveGrowsInPlace: the first steps' sizes are observed on a
// sampling plan grown from the smallest envelope, which holds less than a
// plan at the conservative envelope, and give what that plan observes.
func TestTypedObserveGrowsInPlace(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	tr, err := New(record.New(cpu.New(2)), ds, cfg, Options{Mode: Replay})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	mem := backend.MemoryOf(tr.be)
	mem.ResetPeak()
	base := mem.InUseBytes()
	obs, _, err := tr.observeTyped(4)
	if err != nil {
		t.Fatal(err)
	}
	held := mem.PeakBytes() - base
	p, err := tr.conservativeSampler()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Free()
	consBytes := mem.InUseBytes() - base
	want := zeroCaps(p.Typed.Caps)
	perm, _ := tr.epochSeeds(0)
	for s := range 4 {
		counts, err := tr.sampleSizes(p, perm, 0, s)
		if err != nil {
			t.Fatal(err)
		}
		p.Typed.observe(want, counts)
	}
	for l := range want {
		if !slices.Equal(obs[l].Types, want[l].Types) || !slices.Equal(obs[l].Edges, want[l].Edges) {
			t.Errorf("layer %d: observed %+v, the conservative plan observes %+v", l, obs[l], want[l])
		}
	}
	t.Logf("observing held %d bytes; a conservative sampling plan holds %d", held, consBytes)
	if held >= consBytes {
		t.Errorf("observing held %d bytes, a conservative sampling plan's %d or more", held, consBytes)
	}
}
