package nn

import (
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// wholeBlock is h's view with every source of its type as the relation's
// own, in the type's order: what RGAT computed before it projected a
// relation's own sources alone.
func wholeBlock(h hostBlock, src int, _ bool) hostBlock {
	c := hostBlock{indptr: h.indptr, indices: h.indices, nDst: h.nDst, caps: Caps{Dst: h.caps.Dst, Edges: h.caps.Edges, Src: src}}
	for j := range h.srcIDs {
		c.srcIDs = append(c.srcIDs, int32(j))
	}
	return c
}

// TestRGATCompactEqualsWhole: RGAT over each relation's own sources
// (TypedBatch.Compact as the plan numbers them) gives the loss, every
// parameter's gradient and the input rows' gradients that it gives over
// every source of the relation's type, to float32 rounding: the rows no
// edge reads change nothing.
func TestRGATCompactEqualsWhole(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"two-widths", heteroSchema(KindRGAT, 3, 2)},
		{"one-width", heteroSchema(KindRGAT, 3, 3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(view func(hostBlock, int, bool) hostBlock) (loss float32, grads [][]float32) {
				be := newCPU(t)
				m, err := NewModel(be, c.cfg, 7)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				spreadAttention(t, be, m)
				b, caps := typedBatchWith(t, be, c.cfg, denseShape(), view)
				if err := m.ReserveTyped(caps); err != nil {
					t.Fatal(err)
				}
				rnd := backend.Rand{Seed: 11, Clock: upload(t, be, []int32{0, 3})}
				_, _ = m.Loss(b, m.Forward(b, true, rnd))
				m.Backward(b)
				v := make([]float32, 1)
				be.Read(v, m.hetero.loss, 0)
				for _, p := range m.Params() {
					g := make([]float32, p.Size())
					be.Read(g, p.G, 0)
					grads = append(grads, g)
				}
				for _, dx := range b.Typed.DX {
					g := make([]float32, dx.Len())
					be.Read(g, dx, 0)
					grads = append(grads, g)
				}
				syncOK(t, be)
				if err := m.Err(); err != nil {
					t.Fatal(err)
				}
				return v[0], grads
			}
			lossC, gradC := run(compactBlock)
			lossW, gradW := run(wholeBlock)
			if err := tolerance.Within(float64(lossC), float64(lossW), float64(lossW), 1e-6); err != nil {
				t.Errorf("loss: %v", err)
			}
			for i := range gradW {
				// Relative to the tensor's largest gradient (a floor for the
				// near-zero ones).
				floor := 0.0
				for _, g := range gradW[i] {
					floor = max(floor, math.Abs(float64(g)))
				}
				if err := tolerance.Close(gradC[i], gradW[i], max(floor, 1e-30), 1e-5); err != nil {
					t.Errorf("gradient %d: %v", i, err)
				}
			}
		})
	}
}
