package train

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// typedDraw samples step s of epoch 0 on tr's plan and returns every
// count, and per layer and type the source ids, and per layer and
// relation the indptr and local indices, as read back.
func typedDraw(t *testing.T, tr *Trainer, s int) [][]int32 {
	t.Helper()
	th := tr.plan.Typed
	counts := sampleTyped(t, tr, s)
	out := [][]int32{counts}
	read := func(b backend.Buffer, n int) {
		v := make([]int32, n)
		tr.be.Read(v, b, 0)
		out = append(out, v)
	}
	for l := range th.Caps {
		for ty := range th.SrcIDs[l] {
			read(th.SrcIDs[l][ty], int(counts[th.Src[l][ty].Off]))
		}
		for r, b := range th.Rels[l] {
			if th.Caps[l].Types[tr.ds.Relations[r].Dst].Dst == 0 {
				continue
			}
			e := int(counts[b.NumEdges.Off])
			read(b.Indices, e)
			read(b.Nbrs, e)
		}
	}
	if err := tr.sync(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTypedSamplesCUDA: the GPU draws the CPU's typed samples: every
// count, every type's source ids and every relation's sampled neighbours
// and local indices, for the first steps of hetero-tiny.
func TestTypedSamplesCUDA(t *testing.T) {
	gpu := openCUDA(t)
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	open := func(be backend.Backend) *Trainer {
		tr, err := New(be, ds, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		return tr
	}
	c, g := open(cpu.New(2)), open(gpu)
	for s := range 4 {
		want, got := typedDraw(t, c, s), typedDraw(t, g, s)
		if len(got) != len(want) {
			t.Fatalf("step %d: %d arrays on the GPU, %d on the CPU", s, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("step %d: array %d differs: GPU %v..., CPU %v...", s, i, got[i][:min(8, len(got[i]))], want[i][:min(8, len(want[i]))])
			}
		}
	}
}

// TestTypedReplayBitwiseCUDA: with the deterministic aggregation backward
// and capacity GEMMs, typed runs (rsage, rgcn, rgat with four heads and
// attention dropout) on the GPU give the same losses and parameters eager
// twice, and replayed (both at the conservative envelope) the eager run's,
// bit for bit, with the next step's sampling beside the step and in
// order; the first steps' losses are the CPU's within 1e-3.
func TestTypedReplayBitwiseCUDA(t *testing.T) {
	gpu := openCUDAWith(t, cuda.Options{Deterministic: true, CapacityGemm: true})
	ds := heteroTiny(t)
	for _, c := range []struct {
		model         string
		dropout, attn float32
	}{{"rsage", 0.5, 0}, {"rsage", 0, 0}, {"rgcn", 0.5, 0}, {"rgat", 0.5, 0.3}} {
		name := fmt.Sprintf("%s dropout %g attention dropout %g", c.model, c.dropout, c.attn)
		cfg := heteroConfig(t, c.model)
		cfg.Epochs, cfg.Dropout = 4, c.dropout
		if c.model == "rgat" {
			cfg.Heads, cfg.AttnDropout = 4, c.attn
		}
		eagerLoss, eagerParams := eagerRun(t, gpu, ds, cfg)
		eager2, _ := eagerRun(t, gpu, ds, cfg)
		inOrder, inOrderParams, _ := replayRun(t, gpu, ds, cfg, ReplayOptions{InOrder: true, Conservative: true})
		replayLoss, replayParams, st := replayRun(t, gpu, ds, cfg, ReplayOptions{Conservative: true})
		// At the tightened envelope the products run at other capacities
		// (CapacityGemm): within the replay bound of eager, not bitwise.
		tightLoss, _, _ := replayRun(t, gpu, ds, cfg, ReplayOptions{})
		if worst, err := tolerance.Losses(tightLoss, eagerLoss, replayDrift); err != nil {
			t.Errorf("%s: replay at the tightened envelope against eager: %v", name, err)
		} else {
			t.Logf("%s: replay at the tightened envelope within %.2g of eager", name, worst)
		}
		for _, r := range []struct {
			what   string
			loss   []float32
			params [][]float32
		}{{"eager again", eager2, nil}, {"replay in order", inOrder, inOrderParams}, {"replay", replayLoss, replayParams}} {
			if i := firstDiff(r.loss, eagerLoss); i >= 0 || len(eagerLoss) < 16 {
				t.Errorf("%s: %s differs from eager at step %d of %d: %v vs %v", name, r.what, i, len(eagerLoss), lossAt(r.loss, i), lossAt(eagerLoss, i))
				continue
			}
			for i := range r.params {
				if !slices.Equal(r.params[i], eagerParams[i]) {
					t.Errorf("%s: %s: parameter array %d differs", name, r.what, i)
					break
				}
			}
		}
		t.Logf("%s: %d steps, %d captures", name, len(eagerLoss), st.Captures)
		cpuLoss := stepLossesOn(t, nil, ds, cfg, 1)
		gpuLoss := stepLossesOn(t, gpu, ds, cfg, 1)
		if d := relClose(t, name+" GPU against CPU", gpuLoss[:4], cpuLoss[:4], 1e-3); d > 1e-3 {
			t.Errorf("%s: the GPU's first losses differ from the CPU's by %.2g", name, d)
		}
	}
}

// TestTypedEmbeddingsCUDA: TestTypedEmbeddings on the GPU, with the last
// layer's head and with jumping knowledge over the target's layers.
func TestTypedEmbeddingsCUDA(t *testing.T) {
	gpu := openCUDA(t)
	for _, jk := range []string{"", "cat"} {
		t.Run("jk "+jk, func(t *testing.T) { checkTypedEmbeddings(t, gpu, jk) })
	}
}
