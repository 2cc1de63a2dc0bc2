package job

import (
	"bytes"
	"context"
	"errors"
	"github.com/fanout-gnn/fanout/train"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/rmat"
)

// tinyJob is one epoch of the tiny preset on CPU devices.
func tinyJob(t *testing.T, mode train.Mode) (Job, *bytes.Buffer) {
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
		mode    train.Mode
		devices int
		says    string
	}{{train.Auto, 0, "eager mode"}, {train.Replay, 0, "replay mode"}, {train.Hybrid, 0, "hybrid mode"}, {train.Eager, 2, "global batch"}} {
		j, log := tinyJob(t, c.mode)
		j.Devices = c.devices
		sum, err := Run(context.Background(), j)
		if err != nil {
			t.Fatalf("%v on %d devices: %v\n%s", c.mode, c.devices, err, log)
		}
		if sum == nil || sum.Epochs != 1 || !(sum.Test[train.MetricAcc] > 0) || !strings.Contains(log.String(), c.says) {
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
	j, log := tinyJob(t, train.Eager)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, j); !errors.Is(err, ErrInterrupted) || !strings.Contains(log.String(), "interrupted (no --out: nothing saved)") {
		t.Errorf("err %v, log:\n%s", err, log)
	}
}

// TestRunBench: each mode asked for is measured in order and reported as
// it is (auto is eager on the CPU; replay's speed-up is over the eager
// pass of the same run); device counts are trained and reported each.
func TestRunBench(t *testing.T) {
	j, _ := tinyJob(t, train.Auto)
	var modes []string
	b := Bench{Job: j, Modes: []train.Mode{train.Auto, train.Replay}, Steps: 2, Warmup: 1,
		OnMode: func(r BenchReport) error {
			if !(r.StepSeconds > 0) || (r.Mode == "replay") != (r.Replay != nil) || (r.Mode == "replay") != (r.SpeedupOverEager > 0) {
				t.Errorf("%s: %+v", r.Mode, r)
			}
			modes = append(modes, r.Mode)
			return nil
		}}
	if err := RunBench(context.Background(), b); err != nil || !slices.Equal(modes, []string{"eager", "replay"}) {
		t.Fatalf("modes %v, %v", modes, err)
	}
	var counts []int
	b.DeviceCounts, b.Modes = "1,2", []train.Mode{train.Eager}
	b.OnDevices = func(r DevicesReport) error {
		counts = append(counts, r.Devices)
		if r.Mode != "eager" || !(r.EpochS > 0) || r.Epochs != 1 {
			t.Errorf("%d devices: %+v", r.Devices, r)
		}
		return nil
	}
	if err := RunBench(context.Background(), b); err != nil || !slices.Equal(counts, []int{1, 2}) {
		t.Fatalf("counts %v, %v", counts, err)
	}
	b.Modes = []train.Mode{train.Eager, train.Replay}
	if err := RunBench(context.Background(), b); err == nil || !strings.Contains(err.Error(), "both measures one device") {
		t.Errorf("both with devices: %v", err)
	}
}
