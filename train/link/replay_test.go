package link

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// params reads every learnt tensor of a trainer (model, then decoder).
func (t *Trainer) params() [][]float32 {
	var out [][]float32
	read := func(b backend.Buffer, n int) {
		s := make([]float32, n)
		t.be.Read(s, b, 0)
		out = append(out, s)
	}
	for _, p := range t.m.Params() {
		read(p.W, p.Size())
	}
	for _, p := range t.dec.params {
		read(p.W, p.Rows*p.Cols)
	}
	return out
}

// TestReplayReproducesEagerBitwise: the captured step (negative sampling,
// exclusion, relabelling, the decoder and Adam included) launched for
// every batch gives the eager run's epoch losses, accuracies, metrics
// and parameters bit for bit, on the CPU under the record wrapper.
func TestReplayReproducesEagerBitwise(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	var sums [2]*Summary
	var ps [2][][]float32
	for i, replay := range []bool{false, true} {
		var be backend.Backend = cpu.New(2)
		if replay {
			be = record.New(be)
		}
		sums[i], ps[i] = trainLink(t, be, ds, cfg, replay)
	}
	eager, replayed := sums[0], sums[1]
	for e := range eager.Epochs {
		a, b := eager.Epochs[e], replayed.Epochs[e]
		if math.Float64bits(a.Loss) != math.Float64bits(b.Loss) || a.TrainAcc != b.TrainAcc {
			t.Errorf("epoch %d: eager loss %v acc %v, replayed %v %v", e+1, a.Loss, a.TrainAcc, b.Loss, b.TrainAcc)
		}
	}
	if eager.Test.AUC != replayed.Test.AUC || eager.Test.MRR != replayed.Test.MRR {
		t.Errorf("test metrics: eager %+v, replayed %+v", eager.Test, replayed.Test)
	}
	for i := range ps[0] {
		if !slices.Equal(ps[0][i], ps[1][i]) {
			t.Fatalf("parameter %d differs between eager and replay", i)
		}
	}
	if eager.Epochs[0].Loss == eager.Epochs[1].Loss {
		t.Error("the loss did not change between epochs: nothing was learnt")
	}
}
