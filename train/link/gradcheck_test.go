package link

import (
	"fmt"
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestStepGradient: the step's gradients (pair products, the decoder,
// binary cross-entropy and the model's backward pass through them) equal
// central differences of its loss, for both decoders and two models, at
// entries of the bottom layer's weights and of the decoder's.
func TestStepGradient(t *testing.T) {
	ds := ringData(t, 120)
	for _, c := range []struct{ model, decoder string }{{"gcn", DecoderDot}, {"sage", DecoderMLP}} {
		t.Run(c.model+"/"+c.decoder, func(t *testing.T) {
			cfg := ringConfig()
			cfg.Model, cfg.Decoder, cfg.Dropout, cfg.Batch = c.model, c.decoder, 0, 16
			tr := inOrder(t, cpu.New(1), ds, cfg)
			if c.decoder == DecoderMLP {
				// Hidden units on (+0.1) and off (-0.1), away from the ReLU's
				// kink: the products at initialisation are far smaller.
				b1 := cpu.F32(tr.dec.params[1].W)
				for i := range b1 {
					b1[i] = 0.1 - 0.2*float32(i%2)
				}
			}
			loss := func() float64 {
				tr.be.Write(tr.plan.Clock, 0, []int32{0, 1})
				tr.issueLoss()
				var l [1]float32
				tr.be.Read(l[:], tr.loss, 0)
				return float64(l[0])
			}
			tr.be.Write(tr.plan.Clock, 0, []int32{0, 1})
			tr.issueGrads(tr.issueLoss())
			if err := tr.be.Sync(); err != nil {
				t.Fatal(err)
			}
			params := []struct {
				name string
				w, g backend.Buffer
				n    int
			}{{tr.m.Params()[0].Name, tr.m.Params()[0].W, tr.m.Params()[0].G, tr.m.Params()[0].Size()}}
			for _, p := range tr.dec.params {
				params = append(params, struct {
					name string
					w, g backend.Buffer
					n    int
				}{p.Name, p.W, p.G, p.Rows * p.Cols})
			}
			checked := 0
			for _, p := range params {
				w, g := cpu.F32(p.w), append([]float32(nil), cpu.F32(p.g)[:p.n]...)
				for _, i := range []int{0, p.n / 3, p.n - 1} {
					const eps = 1e-3
					orig := w[i]
					w[i] = orig + eps
					up := loss()
					w[i] = orig - eps
					down := loss()
					w[i] = orig
					num := (up - down) / (2 * eps)
					what := fmt.Sprintf("%s[%d]", p.name, i)
					if math.Abs(num-float64(g[i])) > 2e-3*math.Max(1, math.Abs(num)) {
						t.Errorf("%s: gradient %g, central difference %g", what, g[i], num)
					}
					checked++
				}
			}
			if checked < 3 {
				t.Fatalf("checked %d entries", checked)
			}
		})
	}
}
