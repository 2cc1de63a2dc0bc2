package train

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestLearnBeside: Learn issues Plan.Beside once a step, after the bottom
// layer's forward pass and before the loss (the model's loss buffer still
// holds the step before's), or with BesideLate between the loss and the
// backward pass (the buffer holds this step's loss); either way the steps
// give the losses they give without it.
func TestLearnBeside(t *testing.T) {
	ds := randomData(t, 60, 90)
	cfg := inferConfig("sage", 2)
	cfg.Batch = 6 // three batches of the 20 training vertices
	losses := func(beside, late bool) []float32 {
		tr, err := New(cpu.New(2), ds, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		p := tr.plan
		perm := Shuffle(ds.Train, cfg.Seed, 0)
		var out []float32
		var lossBuf backend.Buffer // the model's, returned by Learn
		for s := range 3 {
			calls := 0
			var atCall []float32
			if beside {
				p.Beside, p.BesideLate = func() {
					calls++
					if lossBuf != nil {
						atCall = make([]float32, 1)
						tr.be.Read(atCall, lossBuf, 0)
					}
				}, late
			}
			p.SetBatch(perm[s*cfg.Batch:(s+1)*cfg.Batch], 0, s)
			p.Sample(tr.in, cfg.Seed)
			p.Gather(tr.in)
			lb, _ := p.Learn(tr.model, tr.in, cfg.Seed, tr.adam)
			lossBuf = lb
			loss := make([]float32, 1)
			tr.be.Read(loss, lb, 0)
			if err := tr.sync(); err != nil {
				t.Fatal(err)
			}
			if beside {
				if calls != 1 {
					t.Fatalf("late %v, step %d: Beside called %d times, want once", late, s, calls)
				}
				if atCall != nil && (atCall[0] == loss[0]) != late {
					t.Errorf("late %v, step %d: the loss buffer held %v when Beside ran, the step's loss is %v", late, s, atCall[0], loss[0])
				}
			}
			out = append(out, loss[0])
		}
		return out
	}
	want := losses(false, false)
	for _, late := range []bool{false, true} {
		if got := losses(true, late); !slices.Equal(got, want) {
			t.Errorf("late %v: losses %v, want %v as without Beside", late, got, want)
		}
	}
}
