package train

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// normModels are tiny's models with normalisation and jumping knowledge.
var normModels = []struct{ model, norm, jk string }{
	{"sage", "batch", "cat"},
	{"gin", "batch", ""},
	{"gcn", "layer", "max"},
	{"gat", "batch", "last"},
}

// TestReplayWithNormReproducesEagerBitwise: models with batch or layer
// normalisation and jumping knowledge replay their eager run bit for bit,
// the running statistics (parameters among the others here) included: the
// captured step updates them on the device.
func TestReplayWithNormReproducesEagerBitwise(t *testing.T) {
	ds := tinyData(t)
	for _, c := range normModels {
		cfg := tinyModel(t, c.model)
		cfg.Epochs, cfg.Norm, cfg.JK = 2, c.norm, c.jk
		replayMatchesEager(t, fmt.Sprintf("%+v", c), ds, cfg, 10)
	}
}

// TestReplayWithNormOverflowRecoversExactly: steps whose envelope
// overflowed leave the running statistics as they leave the parameters,
// so the replayed run still equals the eager one.
func TestReplayWithNormOverflowRecoversExactly(t *testing.T) {
	ds, cfg, _, _, small := overflowCase(t)
	cfg.Norm = "batch"
	wantLoss, wantParams := eagerRun(t, cpu.New(2), ds, cfg)
	gotLoss, gotParams, st := replayRun(t, record.New(cpu.New(2)), ds, cfg, ReplayOptions{Caps: small, Margin: 1.01})
	if st.Overflows == 0 {
		t.Fatalf("no overflow forced: %+v", st)
	}
	sameRun(t, fmt.Sprintf("replay after %d overflows against eager", st.Overflows), gotLoss, wantLoss, gotParams, wantParams)
}

// TestNormCheckpointHoldsRunningStatistics: a snapshot holds the running
// statistics (moved from their initial zeros and ones by training), and a
// new trainer restored from it evaluates as the trained one does.
func TestNormCheckpointHoldsRunningStatistics(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyModel(t, "gcn")
	cfg.Epochs, cfg.Norm = 1, "batch"
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	runTrainer(t, tr, false)
	snap, err := tr.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, p := range snap.Params {
		if p.Name != "layer0.norm.running" {
			continue
		}
		found = true
		w, dim := snap.Data[i][0], p.Shape[1]
		if w[0] == 0 || w[dim] == 1 {
			t.Errorf("running statistics not trained: mean %v, variance %v", w[0], w[dim])
		}
	}
	if !found {
		t.Fatalf("no running statistics among the checkpoint's parameters %v", snap.Params)
	}
	want, wantLoss, err := tr.Evaluate(ds.Test)
	if err != nil {
		t.Fatal(err)
	}
	tr2, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr2.Close()
	if err := tr2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	got, gotLoss, err := tr2.Evaluate(ds.Test)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || gotLoss != wantLoss {
		t.Errorf("restored model's test accuracy and loss %v, %v; trained model's %v, %v", got, gotLoss, want, wantLoss)
	}
}

// TestLossGrowthStops: an epoch loss 100 times the run's lowest so far
// (and above an uninformed model's) stops the run with a message naming
// the cause and --norm batch; smaller swings, and growth below an
// uninformed model's loss, do not; with normalisation the message names
// the learning rate alone.
func TestLossGrowthStops(t *testing.T) {
	ds := tinyData(t) // 8 classes: an uninformed loss of ln 8 = 2.08
	for _, norm := range []string{"", "batch"} {
		cfg := tinyModel(t, "gin")
		cfg.Norm = norm
		tr, err := New(cpu.New(1), ds, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, loss := range []float64{1.5, 0.01, 1.2, 0.5} { // 1.2: 120-fold, but below ln 8
			if err := tr.checkLoss(EpochStats{Epoch: i + 1, Steps: 3, Loss: loss}); err != nil {
				t.Fatalf("norm %q: epoch loss %v stopped the run: %v", norm, loss, err)
			}
		}
		err = tr.checkLoss(EpochStats{Epoch: 5, Steps: 3, Loss: 2.5})
		tr.Close()
		if err == nil {
			t.Fatalf("norm %q: an epoch loss of 2.5 after 0.01 did not stop the run", norm)
		}
		msg := err.Error()
		for _, want := range []string{"epoch 5", "100 times", "0.01", "lower --lr"} {
			if !strings.Contains(msg, want) {
				t.Errorf("norm %q: %q does not name %q", norm, msg, want)
			}
		}
		if names := strings.Contains(msg, "--norm batch") && strings.Contains(msg, "sums of neighbours grow"); names != (norm == "") {
			t.Errorf("norm %q: %q names --norm batch and the growing sums of neighbours: %v", norm, msg, names)
		}
	}
}

// TestInferWithNormAndJK: layer-wise inference (--full-eval, eval's
// logits) of models with normalisation and jumping knowledge gives the
// seeds the logits of evaluation's multi-hop forward pass over all
// neighbours: batch normalisation by the running statistics both ways,
// the head over every layer's whole-graph table.
func TestInferWithNormAndJK(t *testing.T) {
	ds := randomData(t, 60, 90)
	seeds := []int32{0, 1, 5, 17, 33, 59, 42, 2}
	for _, c := range normModels {
		t.Run(c.model+"-"+c.norm+"-"+c.jk, func(t *testing.T) {
			cfg := inferConfig(c.model, 2)
			cfg.Norm, cfg.JK = c.norm, c.jk
			inferMatchesForward(t, ds, seeds, cfg)
		})
	}
}
