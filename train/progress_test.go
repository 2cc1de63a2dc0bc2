package train

import (
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// TestProgress: both drivers report every step of every epoch and every
// evaluation batch as it is issued, and close each epoch with "".
func TestProgress(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 2
	steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	for _, replay := range []bool{false, true} {
		t.Run(fmt.Sprint("replay=", replay), func(t *testing.T) {
			last := map[string]int{}
			ends, evals := 0, 0
			opt := Options{Mode: modeOf(replay), OnProgress: func(stage string, done, total int) {
				switch {
				case stage == "":
					ends++
				case stage == "evaluate":
					evals++
				default:
					if done != last[stage]+1 || total != steps {
						t.Errorf("%s: %d of %d after %d", stage, done, total, last[stage])
					}
					last[stage] = done
				}
			}}
			be := record.New(cpu.New(1))
			tr, err := New(be, ds, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			runTrainer(t, tr, replay)
			for e := 1; e <= 2; e++ {
				if got := last[fmt.Sprintf("epoch %d/2", e)]; got != steps {
					t.Errorf("epoch %d: progress reached %d of %d steps", e, got, steps)
				}
			}
			if ends != 2 || evals == 0 {
				t.Errorf("%d epoch ends, %d evaluation reports", ends, evals)
			}
		})
	}
}
