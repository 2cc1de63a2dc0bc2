package link

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/train"
)

// TestReplayReproducesEagerBitwise: the replay driver (the captured step:
// the edges sliced on the device, negative sampling, exclusion,
// relabelling, the decoder and Adam included, the next step sampled beside
// it) gives the eager run's step losses, accuracies, metrics and
// parameters bit for bit, on the CPU under the record wrapper.
func TestReplayReproducesEagerBitwise(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	eager := trainLink(t, record.New(cpu.New(2)), ds, cfg, train.Eager, train.Options{})
	replayed := trainLink(t, record.New(cpu.New(2)), ds, cfg, train.Replay, train.Options{})
	if len(eager.epochs) != cfg.Epochs || len(replayed.epochs) != cfg.Epochs {
		t.Fatalf("epochs: eager %d, replay %d; want %d", len(eager.epochs), len(replayed.epochs), cfg.Epochs)
	}
	if !slices.Equal(eager.steps, replayed.steps) || len(eager.steps) == 0 {
		t.Errorf("step losses differ between eager and replay:\n%v\n%v", eager.steps, replayed.steps)
	}
	for e := range eager.epochs {
		// The eager driver adds the epoch's losses on the host in float64,
		// the replay driver on the device in float32.
		a, b := eager.epochs[e], replayed.epochs[e]
		if !(math.Abs(a.Loss-b.Loss) <= 1e-6*a.Loss) || a.TrainAcc != b.TrainAcc {
			t.Errorf("epoch %d: eager loss %v acc %v, replayed %v %v", e+1, a.Loss, a.TrainAcc, b.Loss, b.TrainAcc)
		}
	}
	for _, k := range []string{MetricAUC, MetricMRR} {
		if eager.sum.Test[k] != replayed.sum.Test[k] {
			t.Errorf("test %s: eager %v, replayed %v", k, eager.sum.Test[k], replayed.sum.Test[k])
		}
	}
	for i := range eager.params {
		if !slices.Equal(eager.params[i], replayed.params[i]) {
			t.Fatalf("parameter %d differs between eager and replay", i)
		}
	}
	if eager.epochs[0].Loss == eager.epochs[1].Loss {
		t.Error("the loss did not change between epochs: nothing was learnt")
	}
	if eager.sum.Task != train.TaskLink || eager.sum.Primary != MetricAUC || !(eager.sum.Test[MetricAUC] > 0) {
		t.Errorf("summary %+v: want the link task's figures", eager.sum)
	}
}
