package nn

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestGradsHoldEveryGradient: for every model, each parameter's gradient
// is a view of Grads and the views do not overlap: writing a distinct
// value into every gradient element and reading Grads back finds every
// value once.
func TestGradsHoldEveryGradient(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGIN, KindGAT} {
		t.Run(kind, func(t *testing.T) {
			be := cpu.New(1)
			cfg := Config{Kind: kind, InDim: 5, Hidden: 8, Classes: 3, Layers: 3, LearnEps: kind == KindGIN}
			if kind == KindGAT {
				cfg.Heads, cfg.OutHeads = 2, 1
			}
			m, err := NewModel(be, cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			g := m.Grads()
			if g == nil {
				t.Fatal("no gradient arena")
			}
			next, total := float32(1), 0
			for _, p := range m.Params() {
				vals := make([]float32, p.Size())
				for i := range vals {
					vals[i] = next
					next++
				}
				be.Write(p.G, 0, vals)
				total += p.Size()
			}
			all := make([]float32, g.Len())
			be.Read(all, g, 0)
			if err := be.Sync(); err != nil {
				t.Fatal(err)
			}
			seen := map[float32]int{}
			for _, v := range all {
				if v != 0 {
					seen[v]++
				}
			}
			if len(seen) != total {
				t.Fatalf("Grads holds %d of the %d gradient values", len(seen), total)
			}
			for v, n := range seen {
				if n != 1 {
					t.Fatalf("value %v found %d times: gradients overlap", v, n)
				}
			}
		})
	}
}

// TestArenaAlignsParameters: parameters taken from arenas start on
// paramAlign-element boundaries whatever their sizes, and a parameter past
// the arenas' size is an error.
func TestArenaAlignsParameters(t *testing.T) {
	be := cpu.New(1)
	a, err := arenaParams(be, 3*paramAlign)
	if err != nil {
		t.Fatal(err)
	}
	defer a.free()
	for i, n := range []int{3, paramAlign + 1} {
		before := a.off
		if _, err := newParam(a, "p", n); err != nil {
			t.Fatal(err)
		}
		if before%paramAlign != 0 || a.off%paramAlign != 0 || a.off-before < n {
			t.Fatalf("parameter %d of %d values took [%d, %d)", i, n, before, a.off)
		}
	}
	if _, err := newParam(a, "past", 2); err == nil {
		t.Fatal("a parameter past the arenas was made")
	}
}
