package job

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/rmat"
)

// tinyJob is one epoch of the tiny preset on CPU devices.
func tinyJob(t *testing.T, mode Mode) (Job, *bytes.Buffer) {
	t.Helper()
	p, err := rmat.Lookup("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg := PresetConfig(p)
	cfg.Epochs = 1
	var log bytes.Buffer
	return Job{Config: cfg, Source: Source{Preset: "tiny"}, Device: "cpu", Threads: 2, Mode: mode, Log: &log,
		Hybrid: HybridSettings{CacheRows: -1, SuperBatch: 1}}, &log
}

// TestRunModes: each mode trains the tiny preset one epoch on the CPU and
// says which driver ran; auto is eager there, and one device or two in a
// group report the same kind of summary.
func TestRunModes(t *testing.T) {
	for _, c := range []struct {
		mode    Mode
		devices int
		says    string
	}{{Auto, 0, "eager mode"}, {Replay, 0, "replay mode"}, {Hybrid, 0, "hybrid mode"}, {Eager, 2, "global batch"}} {
		j, log := tinyJob(t, c.mode)
		j.Devices = c.devices
		sum, err := Run(context.Background(), j)
		if err != nil {
			t.Fatalf("%v on %d devices: %v\n%s", c.mode, c.devices, err, log)
		}
		if sum == nil || sum.Epochs != 1 || !(sum.TestAcc > 0) || !strings.Contains(log.String(), c.says) {
			t.Errorf("%v on %d devices: summary %+v, log lacks %q:\n%s", c.mode, c.devices, sum, c.says, log)
		}
		if c.devices > 0 && (sum.Devices != c.devices || sum.GlobalBatch != c.devices*j.Config.Batch) {
			t.Errorf("%d devices: %d devices, global batch %d; want the batch per device", c.devices, sum.Devices, sum.GlobalBatch)
		}
	}
}

// TestRunInterrupted: a cancelled job stops, says that nothing was saved
// (no run directory) and returns ErrInterrupted.
func TestRunInterrupted(t *testing.T) {
	j, log := tinyJob(t, Eager)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, j); !errors.Is(err, ErrInterrupted) || !strings.Contains(log.String(), "interrupted (no --out: nothing saved)") {
		t.Errorf("err %v, log:\n%s", err, log)
	}
}
