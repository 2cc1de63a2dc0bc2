package train

import (
	"context"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// TestDivergingRunStops: GIN on tiny at a learning rate of 1 reaches
// epoch losses of millions; the eager and the replay driver stop at the
// first such epoch with one error naming the cause and the flag, instead
// of training on (the replay driver reads losses only per epoch, so a NaN
// or a runaway loss used to go unnoticed to the end), while SAGE at its
// default rate trains through.
func TestDivergingRunStops(t *testing.T) {
	ds := tinyData(t)
	for _, replay := range []bool{false, true} {
		cfg := tinyConfig(t)
		cfg.Model, cfg.LR, cfg.Epochs = "gin", 1, 3
		be := cpu.New(2)
		var tr *Trainer
		var err error
		if replay {
			tr, err = New(record.New(be), ds, cfg, Options{Mode: Replay})
		} else {
			tr, err = New(be, ds, cfg, Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if replay {
			_, _, err = tr.RunReplay(context.Background(), ReplayOptions{})
		} else {
			_, err = tr.Run(context.Background())
		}
		tr.Close()
		if err == nil || !strings.Contains(err.Error(), "epoch 1: the training loss") || !strings.Contains(err.Error(), "the model diverges; lower --lr") {
			t.Errorf("replay %v: GIN at lr 1 returned %v; want it stopped at epoch 1 naming the divergence and --lr", replay, err)
		}
	}
	cfg := tinyConfig(t)
	cfg.Epochs = 2
	trained(t, ds, cfg, Options{}) // SAGE at its default rate trains
}
