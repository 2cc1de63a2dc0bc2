package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
)

// TestScheduleFlagsRefused: an evaluation interval or a target that means
// nothing or is out of range is one line naming the flag, from the command
// line and from a config file, before any training.
func TestScheduleFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"eval-every-steps: 0, want at least 1 step", []string{"--eval-every-steps", "0"}},
		{"eval-every-steps: -2, want at least 1", []string{"--eval-every-steps", "-2"}},
		{"eval-every-epochs: 0, want a fraction of an epoch, 0 < F <= 1", []string{"--eval-every-epochs", "0"}},
		{"eval-every-epochs: 1.5, want a fraction of an epoch", []string{"--eval-every-epochs", "1.5"}},
		{"eval-every-epochs: 0.05, and eval_every_steps is 10: give one of the two", []string{"--eval-every-epochs", "0.05", "--eval-every-steps", "10"}},
		{"target-acc: 1.5, want 0 < A <= 1", []string{"--target-acc", "1.5"}},
		{"target-acc: 0, want 0 < A <= 1", []string{"--target-acc", "0"}},
		{"target-acc: 0, want 0 < A <= 1", []string{"--config", writeConfig(t, "target-acc: 0\n")}},
		{"eval-every-steps: 0, want at least 1 step", []string{"--config", writeConfig(t, "eval-every-steps: 0\n")}},
	} {
		oneLineError(t, c.want, trainArgs(c.args...)...)
	}
}

// TestTargetOnTheCommandLine: train --target-acc stops at the first
// validation that reaches it and prints the time to it, exiting 0; a
// target not reached exits 0 too, saying so.
func TestTargetOnTheCommandLine(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	args := trainArgs("--hidden", "64", "--epochs", "3", "--eval-every-epochs", "0.2", "--target-acc", "0.45", "--out", run)
	code, out, stderr := fanout(t, args...)
	if code != 0 || !strings.Contains(out, "target 0.45 reached at epoch 1 step ") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	var sum struct {
		Reached bool     `json:"target_reached"`
		Time    *float64 `json:"time_to_target_s"`
		At      *struct {
			Epoch, Step int
		} `json:"target_reached_at"`
	}
	b, err := os.ReadFile(filepath.Join(run, checkpoint.SummaryFile))
	if err != nil || json.Unmarshal(b, &sum) != nil || !sum.Reached || sum.Time == nil || sum.At == nil || sum.At.Epoch != 1 {
		t.Fatalf("summary.json (%v):\n%s", err, b)
	}
	code, out, stderr = fanout(t, trainArgs("--eval-every-steps", "3", "--target-acc", "0.99")...)
	if code != 0 || !strings.Contains(out, "target 0.99 not reached after 1 epochs") {
		t.Fatalf("not reached: exit %d\n%s%s", code, out, stderr)
	}
}
