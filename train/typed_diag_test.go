package train

import (
	"fmt"
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
)

func TestTypedDiagCUDA(t *testing.T) {
	gpu := openCUDAWith(t, cuda.Options{Deterministic: true, CapacityGemm: true})
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cpuL := stepLossesOn(t, nil, ds, cfg, 1)
	t.Logf("cpu %v", cpuL[:4])
	for k := range 3 {
		g := stepLossesOn(t, gpu, ds, cfg, 1)
		t.Logf("gpu run %d %v", k, g[:4])
	}
	open := func(be backend.Backend) *Trainer {
		tr, err := New(be, ds, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		return tr
	}
	c, g := open(cpu.New(2)), open(gpu)
	for s := range 3 {
		want, got := typedDraw(t, c, s), typedDraw(t, g, s)
		for i := range want {
			if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
				t.Logf("draw step %d array %d differs", s, i)
			}
		}
	}
	read := func(tr *Trainer, b backend.Buffer) []float32 {
		v := make([]float32, b.Len())
		tr.be.Read(v, b, 0)
		if err := tr.sync(); err != nil {
			t.Fatal(err)
		}
		return v
	}
	diff := func(a, b []float32) float64 {
		d := 0.0
		for i := range a {
			d = math.Max(d, math.Abs(float64(a[i]-b[i])))
		}
		return d
	}
	perm := Shuffle(ds.Train, cfg.Seed, 0)
	for s := range 2 {
		for _, tr := range []*Trainer{c, g} {
			p := tr.plan
			p.SetBatch(perm[s*cfg.Batch:(s+1)*cfg.Batch], 0, s)
			p.Sample(tr.in, cfg.Seed)
			p.Gather(tr.in)
			l, _ := p.Learn(tr.model, tr.in, cfg.Seed, tr.adam)
			t.Logf("step %d %s loss %v", s, tr.be.Name(), read(tr, l)[0])
		}
		for ty := range ds.Types {
			n := c.plan.Typed.Src[0][ty].Cap
			if n == 0 {
				continue
			}
			d := readCount(t, c.be, c.plan.Typed.Src[0][ty]) * (c.plan.Typed.X[ty].Len() / n)
			t.Logf("step %d X[%s] maxdiff %g", s, ds.Types[ty].Name, diff(read(c, c.plan.Typed.X[ty])[:d], read(g, g.plan.Typed.X[ty])[:d]))
			if c.plan.Typed.DX[ty] != nil {
				t.Logf("step %d DX[%s] maxdiff %g", s, ds.Types[ty].Name, diff(read(c, c.plan.Typed.DX[ty])[:d], read(g, g.plan.Typed.DX[ty])[:d]))
			}
		}
		cp, gp := c.Params(), g.Params()
		for i := range cp {
			if d := diff(read(c, cp[i].W), read(g, gp[i].W)); d > 1e-6 {
				t.Logf("step %d param %s W maxdiff %g", s, cp[i].Name, d)
			}
			if cp[i].G != nil {
				if d := diff(read(c, cp[i].G), read(g, gp[i].G)); d > 1e-6 {
					t.Logf("step %d param %s G maxdiff %g", s, cp[i].Name, d)
				}
			}
		}
	}
}

// TestTypedDiag2CUDA: gradients of one fixed batch, computed repeatedly in
// one trainer and in a second trainer.
func TestTypedDiag2CUDA(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cfg.Dropout = 0
	for _, opt := range []cuda.Options{{Deterministic: true, CapacityGemm: true}, {Deterministic: true}} {
		gpu := openCUDAWith(t, opt)
		var ref map[string][]float32
		for k := range 3 {
			tr, err := New(gpu, ds, cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := tr.plan
			p.SetBatch(Shuffle(ds.Train, cfg.Seed, 0)[:cfg.Batch], 0, 0)
			p.Sample(tr.in, cfg.Seed)
			p.Gather(tr.in)
			for rep := range 2 {
				b := p.NNBatch(tr.in)
				out := tr.model.Forward(b, true, backend.Rand{Seed: cfg.Seed, Clock: p.Clock})
				p.Task.Loss(b, out)
				tr.model.Backward(b)
				got := map[string][]float32{}
				for _, q := range tr.model.Params() {
					v := make([]float32, q.G.Len())
					tr.be.Read(v, q.G, 0)
					got[q.Name] = v
				}
				for ty, dx := range p.Typed.DX {
					if dx != nil {
						v := make([]float32, dx.Len())
						tr.be.Read(v, dx, 0)
						got[fmt.Sprintf("dx%d", ty)] = v
					}
				}
				if err := tr.sync(); err != nil {
					t.Fatal(err)
				}
				if ref == nil {
					ref = got
					continue
				}
				for name, v := range got {
					if fmt.Sprint(v) != fmt.Sprint(ref[name]) {
						t.Logf("opt %+v trainer %d repeat %d: %s differs", opt, k, rep, name)
					}
				}
			}
			tr.Close()
		}
	}
}
