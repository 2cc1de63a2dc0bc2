package job

import (
	"testing"

	"github.com/fanout-gnn/fanout/train"
)

// TestReplayTimes: the replay line gives the launches' wall time per
// launch, the device's busy time only where the backend timed it, and the
// growths.
func TestReplayTimes(t *testing.T) {
	st := &train.ReplayStats{Launches: 200, WallS: 5.5, GrowS: 1.25}
	if got, want := replayTimes(st), "replay: 200 launches in 5.50 s of launch loops (27.500 ms each); growths 1.25 s"; got != want {
		t.Errorf("untimed device:\n got %s\nwant %s", got, want)
	}
	st.BusyS = 4
	if got, want := replayTimes(st), "replay: 200 launches in 5.50 s of launch loops (27.500 ms each), the device busy 4.00 s of it (20.000 ms each); growths 1.25 s"; got != want {
		t.Errorf("timed device:\n got %s\nwant %s", got, want)
	}
	if got := replayTimes(&train.ReplayStats{}); got != "replay: 0 launches in 0.00 s of launch loops (0.000 ms each); growths 0.00 s" {
		t.Errorf("no launches: %s", got)
	}
}
