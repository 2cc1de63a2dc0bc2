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
