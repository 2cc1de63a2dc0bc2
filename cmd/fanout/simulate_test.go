package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/train/multigpu/simulate"
)

// TestSimulateJSON: simulate on tiny gives every step of every rank, the
// rows exchanged between 2 hosts of 2 with chunks, and a prediction per
// size of the ladder the global batch splits over.
func TestSimulateJSON(t *testing.T) {
	var out, errs bytes.Buffer
	args := []string{"--hosts", "2", "--devices", "2", "--steps", "3", "--global-batch", "512", "--shard-features", "hosts", "--json"}
	if err := runSimulate(context.Background(), args, &out, &errs); err != nil {
		t.Fatalf("%v: %s", err, errs.String())
	}
	var got struct {
		Simulation  simulate.Result
		Predictions []simulate.Prediction
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	s := got.Simulation
	if len(s.Steps) != 3 || len(s.Steps[0].Ranks) != 4 || s.Steps[0].Ranks[0].Seeds != 128 || s.Steps[0].Imbalance < 1 {
		t.Fatalf("steps %+v", s.Steps)
	}
	x := s.Totals.Exchange
	if x.Host == 0 || x.Other == 0 || x.Reused == 0 || s.Steps[1].Chunk == 0 {
		t.Errorf("exchange %+v, chunk %d", x, s.Steps[1].Chunk)
	}
	if len(got.Predictions) != 7 || got.Predictions[0].Speedup != 1 {
		t.Errorf("predictions %+v", got.Predictions)
	}
}

// TestSimulateText: the text report names the job and predicts the
// ladder; a batch that does not split is refused.
func TestSimulateText(t *testing.T) {
	var out, errs bytes.Buffer
	if err := runSimulate(context.Background(), []string{"--devices", "4", "--steps", "2", "--shard-features", "on"}, &out, &errs); err != nil {
		t.Fatalf("%v: %s", err, errs.String())
	}
	for _, want := range []string{"global batch 1024 (256 per device)", "partitioned over 4 devices", "predicted epochs", "8x8"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	errs.Reset()
	if err := runSimulate(context.Background(), []string{"--devices", "3", "--global-batch", "1000"}, &out, &errs); err == nil {
		t.Errorf("a global batch of 1000 over 3 devices was accepted")
	}
}

// TestSimulateRefusesBadFlags: sizes past a simulation's limits and
// values that would print a table of NaN or +Inf are refused before any
// data is read, in one line naming the flag and what was wrong.
func TestSimulateRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"hosts x devices: 1000000 x 2 ranks, more than the 4096", []string{"--hosts", "1000000"}},
		{"hosts x devices: 1 x 1000000 ranks", []string{"--devices", "1000000"}},
		{"hosts x devices: 9223372036854775807 x 2 ranks", []string{"--hosts", "9223372036854775807"}},
		{"hosts: 0, want at least 1", []string{"--hosts", "0"}},
		{"devices: -2, want at least 1", []string{"--devices", "-2"}},
		{"steps: 0, want at least 1", []string{"--steps", "0"}},
		{"steps: 1000000 steps of 2 ranks, more than the 1048576 rank-steps", []string{"--steps", "1000000", "--predict=false"}},
		{"predict: the ladder's 8x8 devices: steps: 20000 steps of 64 ranks", []string{"--steps", "20000"}},
		{"step-ms: -1, want 0", []string{"--step-ms", "-1"}},
		{"step-ms: NaN", []string{"--step-ms", "NaN"}},
		{"overlap: 2, want a share of the step in [0, 1]", []string{"--overlap", "2"}},
		{"overlap: NaN", []string{"--overlap", "NaN"}},
		{`replicate: "2.5" is not auto, all, a fraction in [0, 1] or a size`, []string{"--replicate", "2.5"}},
		{`replicate: "-0.1"`, []string{"--replicate", "-0.1"}},
		{"net-gbps: 0, want a finite bandwidth above 0", []string{"--net-gbps", "0"}},
		{"net-gbps: +Inf", []string{"--net-gbps", "Inf"}},
		{"nvlink-gbs: -5", []string{"--nvlink-gbs", "-5"}},
		{"pcie-gbs: 0", []string{"--pcie-gbs", "0"}},
		{"collective-us: -1, want a finite value of at least 0", []string{"--collective-us", "-1"}},
		{"net-collective-us: NaN", []string{"--net-collective-us", "NaN"}},
		{"collectives: -1", []string{"--collectives", "-1"}},
		{"batch: -4, want 0 (the default) or more", []string{"--batch", "-4"}},
		{"global-batch: -4", []string{"--global-batch", "-4"}},
		{"param-bytes: -1", []string{"--param-bytes", "-1"}},
		{"hidden: -1", []string{"--hidden", "-1"}},
		{`gpu-memory: "NaN" is not a size`, []string{"--gpu-memory", "NaN"}},
		{`gpu-memory: "-1GiB" is not a size`, []string{"--gpu-memory", "-1GiB"}},
	} {
		var out, errs bytes.Buffer
		err := runSimulate(context.Background(), c.args, &out, &errs)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line containing %q", c.args, err, c.want)
		}
		if errs.Len() > 0 || out.Len() > 0 {
			t.Errorf("%v: wrote %q and %q before refusing: the data was read", c.args, out.String(), errs.String())
		}
	}
}
