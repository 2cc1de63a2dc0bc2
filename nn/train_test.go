package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestOverfit trains a 2-layer SAGE model with dropout on every vertex of a
// small graph (random features, labels v mod 3) and requires the evaluation
// loss to drop to a fraction of its start and every vertex to be classified
// correctly within 100 steps.
func TestOverfit(t *testing.T) {
	be := newCPU(t)
	g := sampleGraph()
	n := int(g.NumNodes)
	seeds := make([]int32, n)
	labels := make([]int32, n+1)
	for v := range seeds {
		seeds[v] = int32(v)
		labels[v] = int32(v % 3)
	}
	labels[n] = garbage
	blocks, caps := sampledBatch(t, be, g, seeds, []int{-1, 3}, 1)
	cfg := Config{Kind: KindSAGE, InDim: 8, Hidden: 32, Classes: 3, Layers: 2, Dropout: 0.1}
	r := rand.New(rand.NewPCG(11, 12))
	feat := randMatrix(r, n, n, cfg.InDim)
	featBuf := upload(t, be, feat)
	x := alloc(t, be, backend.F32, caps[0].Src*cfg.InDim)
	be.Gather(featBuf, cfg.InDim, blocks[0].SrcIDs, blocks[0].NumSrc, x)
	b := &Batch{Blocks: blocks, X: x, Labels: upload(t, be, labels)}
	m := newTestModel(t, be, cfg, caps)
	clock := upload(t, be, []int32{0, 0})
	step := upload(t, be, []int32{0})
	tc := backend.Count{Buf: step, Cap: 1}
	rnd := backend.Rand{Seed: 3, Clock: clock}
	adam := backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	evalLoss := func() (float32, int32) {
		loss, correct := m.Loss(b, m.Forward(b, false, rnd))
		return readF32(be, loss)[0], readI32(be, correct.Buf)[correct.Off]
	}
	start, _ := evalLoss()
	for i := 0; i < 100; i++ {
		be.Write(clock, 1, []int32{int32(i)})
		m.Loss(b, m.Forward(b, true, rnd))
		m.Backward(b)
		be.AddCount(tc, 1, nil)
		m.Update(tc, adam)
	}
	end, correct := evalLoss()
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	syncOK(t, be)
	t.Logf("loss %.4f -> %.4f, %d/%d correct", start, end, correct, n)
	if !(end < 0.1*start) || correct != int32(n) {
		t.Errorf("did not overfit: loss %.4f -> %.4f, %d/%d correct", start, end, correct, n)
	}
}
