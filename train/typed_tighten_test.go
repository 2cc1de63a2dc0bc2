package train

import (
	"context"
	"testing"

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
	_, st, err := tr.RunReplay(context.Background(), ReplayOptions{Observe: 1, Margin: 1})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "replay at a tightened envelope", losses, wantLoss, params(t, tr), wantParams)
	if st.Overflows == 0 || st.Captures < 2 {
		t.Errorf("no step overflowed an envelope observed over one step: %+v", st)
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
