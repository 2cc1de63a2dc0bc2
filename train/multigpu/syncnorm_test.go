package multigpu

import (
	"testing"

	"github.com/fanout-gnn/fanout/internal/tolerance"
	"github.com/fanout-gnn/fanout/train"
)

// TestSyncNormMatchesOneDevice: with --sync-norm, 2 and 4 CPU devices
// splitting the global batch normalise by the whole batch's statistics,
// so they train to one device's losses (within the rounding of the
// moments and of the gradient sums) with the same parameters and running
// statistics on every rank; without it each device normalises by its own
// rows, and the losses part from one device's. Fanouts 0 keep each rank's
// rows its own seeds, so the group's rows are exactly one device's.
func TestSyncNormMatchesOneDevice(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Fanouts, cfg.Norm, cfg.SyncNorm = []int{0, 0}, "batch", true
	one, _, oneSum := runSummary(t, ds, cfg, 1, false)
	for _, n := range []int{2, 4} {
		got, hashes, sum := runSummary(t, ds, cfg, n, false)
		if err := tolerance.Close(got, one, 0, 1e-6); err != nil {
			t.Errorf("%d devices: losses against one device's: %v", n, err)
		}
		// Evaluation by running statistics a few ulps apart may move a
		// vertex on a class boundary, no more.
		if err := tolerance.Within(sum.Test[train.MetricAcc], oneSum.Test[train.MetricAcc], 1, 1e-3); err != nil {
			t.Errorf("%d devices: test accuracy against one device's: %v", n, err)
		}
		for r := 1; r < n; r++ {
			for s := range hashes[0] {
				if hashes[r][s] != hashes[0][s] {
					t.Fatalf("%d devices: after step %d rank %d's parameters or running statistics differ from rank 0's", n, s, r)
				}
			}
		}
	}
	cfg.SyncNorm = false
	apart, _ := run(t, ds, cfg, 2, false)
	if err := tolerance.Apart(apart, one, 0, 1e-3); err != nil {
		t.Errorf("per-device statistics: 2 devices' losses against one device's (the comparison above shows nothing): %v", err)
	}
}

// TestSyncNormReplayMatchesEager: the replay driver on 2 devices, the
// moments' and sums' all-reduces recorded with the step, gives the eager
// 2-device run bit for bit.
func TestSyncNormReplayMatchesEager(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Norm, cfg.SyncNorm, cfg.Model = "batch", true, "gin"
	eager, eh := run(t, ds, cfg, 2, false)
	replay, rh := run(t, ds, cfg, 2, true)
	for i := range eager {
		if eager[i] != replay[i] {
			t.Fatalf("step %d: replay loss %v, eager %v", i, replay[i], eager[i])
		}
	}
	for r := range eh {
		for s := range eh[r] {
			if eh[r][s] != rh[r][s] || rh[r][s] != rh[0][s] {
				t.Fatalf("rank %d step %d: parameters differ between replay and eager, or from rank 0's", r, s)
			}
		}
	}
}
