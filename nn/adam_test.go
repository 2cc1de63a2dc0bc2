package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestAdamUpdate checks Model.Update against Adam computed by hand (float64)
// from known parameters, gradients and moments at step 3, with and without
// L2 weight decay.
func TestAdamUpdate(t *testing.T) {
	for _, wd := range []float32{0, 0.1} {
		t.Run(fmt.Sprintf("wd=%v", wd), func(t *testing.T) {
			be := newCPU(t)
			m := newTestModel(t, be, Config{Kind: KindSAGE, InDim: 3, Classes: 2, Layers: 1}, []Caps{{2, 2, 4}})
			cfg := backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: wd}
			const step = 3
			r := rand.New(rand.NewPCG(9, 10))
			type state struct{ w, g, m, v []float32 }
			before := map[string]state{}
			for _, p := range m.Params() {
				s := state{}
				for _, dst := range []*[]float32{&s.w, &s.g, &s.m, &s.v} {
					*dst = randMatrix(r, p.Size(), p.Size(), 1)
				}
				for i := range s.v {
					s.v[i] = s.v[i] * s.v[i] * 0.01
				}
				be.Write(p.W, 0, s.w)
				be.Write(p.G, 0, s.g)
				be.Write(p.M, 0, s.m)
				be.Write(p.V, 0, s.v)
				before[p.Name] = s
			}
			tc := upload(t, be, []int32{step})
			m.Update(backend.Count{Buf: tc, Cap: 1}, cfg)
			syncOK(t, be)
			b1, b2 := float64(cfg.Beta1), float64(cfg.Beta2)
			for _, p := range m.Params() {
				s := before[p.Name]
				w, mm, vv := readF32(be, p.W), readF32(be, p.M), readF32(be, p.V)
				for i := range s.w {
					g := float64(s.g[i]) + float64(wd)*float64(s.w[i])
					m1 := b1*float64(s.m[i]) + (1-b1)*g
					v1 := b2*float64(s.v[i]) + (1-b2)*g*g
					mh := m1 / (1 - math.Pow(b1, step))
					vh := v1 / (1 - math.Pow(b2, step))
					w1 := float64(s.w[i]) - float64(cfg.LR)*mh/(math.Sqrt(vh)+float64(cfg.Eps))
					for _, c := range []struct {
						what      string
						got, want float64
					}{{"w", float64(w[i]), w1}, {"m", float64(mm[i]), m1}, {"v", float64(vv[i]), v1}} {
						if math.Abs(c.got-c.want) > 1e-6*(1+math.Abs(c.want)) {
							t.Errorf("%s[%d] %s = %.8g, want %.8g", p.Name, i, c.what, c.got, c.want)
						}
					}
				}
			}
		})
	}
}
