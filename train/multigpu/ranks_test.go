package multigpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// TestRunRanks: a failing rank releases the rank waiting for it in a
// reduction (which returns the group's error, the failure) and the
// failure is returned; ranks that are all interrupted abort nothing and
// return the interruption.
func TestRunRanks(t *testing.T) {
	bes, comms := traintest.CPUGroup(t, 2, false)
	colls := []backend.Collective{comms[0], comms[1]}
	failed := errors.New("out of memory")
	err := RunRanks(colls, func(i int) error {
		if i == 1 {
			return failed
		}
		buf, err := bes[0].Alloc(backend.F32, 1)
		if err != nil {
			return err
		}
		defer bes[0].Free(buf)
		comms[0].AllReduceSum(buf) // waits for rank 1 until the abort
		return comms[0].Err()
	})
	if !errors.Is(err, failed) || !strings.Contains(err.Error(), "device ") {
		t.Errorf("a failing rank: %v, want a device's %v", err, failed)
	}
	comms, _ = inproc.New(bes)
	colls = []backend.Collective{comms[0], comms[1]}
	err = RunRanks(colls, func(int) error { return train.ErrInterrupted })
	if !errors.Is(err, train.ErrInterrupted) || comms[0].Err() != nil {
		t.Errorf("interrupted ranks: %v, group error %v; want the interruption and no abort", err, comms[0].Err())
	}
}
