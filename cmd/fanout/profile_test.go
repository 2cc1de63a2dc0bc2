package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/train/job"
)

// TestBenchProfile: --profile adds an eager pass whose JSON line lists the
// step's ops with their calls per step and their times (the CPU backend's
// marks are the host's clock: its ops run synchronously).
func TestBenchProfile(t *testing.T) {
	code, stdout, stderr := fanout(t, "bench", "--preset", "tiny", "--device", "cpu", "--threads", "2",
		"--mode", "eager", "--steps", "2", "--warmup", "1", "--profile", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one JSON line for eager and one for the profile, got %q", stdout)
	}
	var pr job.ProfileReport
	if err := json.Unmarshal([]byte(lines[1]), &pr); err != nil {
		t.Fatal(err)
	}
	calls := map[string]float64{}
	var us, share float64
	for _, o := range pr.Ops {
		calls[o.Name] = o.CallsPerStep
		us += o.USPerStep
		share += o.Share
	}
	// tiny: SAGE with 2 layers; per step 2 sampled hops, 2 forward GEMMs
	// (one per layer, on the concatenation), the bottom layer's reading the
	// resident table in place (so the one Gather is the labels'), one Adam
	// call per parameter (3 per layer).
	want := map[string]float64{"SampleLayer": 2, "Relabel": 2, "AggregateConcatTable": 1, "AggregateConcat": 1,
		"Gather": 1, "Linear": 2, "Adam": 6, "SoftmaxCrossEntropy": 1}
	for name, n := range want {
		if calls[name] != n {
			t.Errorf("%s: %v calls per step, want %v (all: %v)", name, calls[name], n, calls)
		}
	}
	if pr.Mode != "profile" || pr.Steps != 2 || !pr.Timed {
		t.Errorf("report header %+v", pr)
	}
	// The ops' times sum to the reported op time, within the step's wall
	// time (which adds the host's sampling between ops).
	if !(us > 0 && math.Abs(us/1e6-pr.DeviceS) <= 1e-6*pr.DeviceS+1e-9 && pr.DeviceS <= pr.StepS && math.Abs(share-1) < 1e-6) {
		t.Errorf("op times %.1f µs a step (shares sum to %v), op time %v s, step %v s", us, share, pr.DeviceS, pr.StepS)
	}
}
