package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
)

// quick are flags for a training run of a few milliseconds.
var quick = []string{"--device", "cpu", "--threads", "2", "--epochs", "1", "--hidden", "8"}

func trainArgs(extra ...string) []string {
	return append(append([]string{"train"}, quick...), extra...)
}

// quickRun trains quickly (trainArgs) with the extra flags into a fresh
// run directory, which it returns.
func quickRun(t *testing.T, extra ...string) string {
	t.Helper()
	run := filepath.Join(t.TempDir(), "run")
	if code, out, stderr := fanout(t, trainArgs(append([]string{"--out", run}, extra...)...)...); code != 0 {
		t.Fatalf("train %v: exit %d\n%s%s", extra, code, out, stderr)
	}
	return run
}

func TestRunDirectoryIsNotOverwritten(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	oneLineError(t, "does not exist", trainArgs("--out", run, "--resume")...)
	os.Mkdir(run, 0o755)
	oneLineError(t, "has no last.ckpt", trainArgs("--out", run, "--resume")...)
	oneLineError(t, "need --out", trainArgs("--force")...)
	oneLineError(t, "exclude each other", trainArgs("--out", run, "--resume", "--force")...)
	if code, _, stderr := fanout(t, trainArgs("--out", run)...); code != 0 {
		t.Fatalf("first run: %s", stderr)
	}
	metrics, _ := os.ReadFile(filepath.Join(run, checkpoint.MetricsFile))
	code, _, stderr := fanout(t, trainArgs("--out", run)...)
	if code == 0 || !strings.Contains(stderr, "already holds a run") || strings.Contains(stderr, "generated") {
		t.Fatalf("second run into the same directory: exit %d, %s", code, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(run, checkpoint.MetricsFile)); !bytes.Equal(again, metrics) {
		t.Fatal("the refused run changed metrics.jsonl")
	}
	// --resume continues (to 2 epochs); --force starts again from nothing.
	if code, _, stderr := fanout(t, append(trainArgs("--out", run, "--resume"), "--epochs", "2")...); code != 0 || !strings.Contains(stderr, "resumed from") {
		t.Fatalf("resume: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(run, checkpoint.MetricsFile)); strings.Count(string(b), "\n") != 2 {
		t.Fatalf("after resume, metrics.jsonl holds %q", b)
	}
	if code, _, stderr := fanout(t, trainArgs("--out", run, "--force")...); code != 0 {
		t.Fatalf("force: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(run, checkpoint.MetricsFile)); strings.Count(string(b), "\n") != 1 {
		t.Fatalf("after --force, metrics.jsonl holds %q", b)
	}
}

// TestInterruptedTrainExits130: a run cancelled while it sets up stops
// there, before its first step, says it saved nothing and exits with
// Ctrl-C's status; the same command then runs (a signal during training
// saves last.ckpt: TestSignals).
func TestInterruptedTrainExits130(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, trainArgs("--out", dir), &out, &errb)
	if code != 130 || !strings.Contains(errb.String(), "interrupted before the first step: nothing saved in "+dir) || strings.Contains(errb.String(), "epoch 1/") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, checkpoint.LastCheckpoint)); err == nil {
		t.Error("a run stopped before its first step wrote last.ckpt")
	}
	if code, _, stderr := fanout(t, trainArgs("--out", dir)...); code != 0 {
		t.Errorf("the run again after a stop in set-up: exit %d\n%s", code, stderr)
	}
}

// TestEvalChecksCheckpointAndData: a damaged checkpoint and a checkpoint
// of another dataset are errors; --allow-other-data evaluates anyway.
func TestEvalChecksCheckpointAndData(t *testing.T) {
	dir := t.TempDir()
	a, b, run := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "run")
	for _, g := range [][]string{{"gen", "tiny", "--out", a}, {"gen", "tiny", "--out", b, "--seed", "2"}} {
		if code, _, stderr := fanout(t, g...); code != 0 {
			t.Fatal(stderr)
		}
	}
	if code, _, stderr := fanout(t, trainArgs("--data", a, "--out", run)...); code != 0 {
		t.Fatal(stderr)
	}
	ckpt := filepath.Join(run, checkpoint.BestCheckpoint)
	eval := func(data string, extra ...string) (int, string, string) {
		return fanout(t, append([]string{"eval", "--checkpoint", ckpt, "--data", data, "--device", "cpu", "--threads", "2"}, extra...)...)
	}
	if code, _, stderr := eval(a); code != 0 {
		t.Fatalf("eval on its own data: %s", stderr)
	}
	oneLineError(t, "--allow-other-data", "eval", "--checkpoint", ckpt, "--data", b, "--device", "cpu")
	code, out, stderr := eval(b, "--allow-other-data")
	if code != 0 || !strings.Contains(out, "test accuracy") || !strings.Contains(stderr, "evaluating anyway") {
		t.Fatalf("--allow-other-data: exit %d\n%s%s", code, out, stderr)
	}
	raw, _ := os.ReadFile(ckpt)
	raw[len(raw)/2] ^= 1
	os.WriteFile(ckpt, raw, 0o644)
	oneLineError(t, "checksum mismatch", "eval", "--checkpoint", ckpt, "--data", a, "--device", "cpu")
}

// TestRunKilledBeforeFirstCheckpoint: a run directory whose run was killed
// before its first checkpoint (its lock and an empty metrics.jsonl) is
// trained again by train, and by train --resume, which says why, neither
// needing --force. Before, train said "continue it with --resume" and
// --resume said there was no last.ckpt.
func TestRunKilledBeforeFirstCheckpoint(t *testing.T) {
	for _, extra := range [][]string{nil, {"--resume"}} {
		run := filepath.Join(t.TempDir(), "run")
		r, err := checkpoint.OpenRunDir(run, checkpoint.NewRun)
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // a finished run's Close removes its lock file; a killed run's stays:
		for _, f := range []string{checkpoint.LockFile, checkpoint.MetricsFile} {
			if err := os.WriteFile(filepath.Join(run, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, _, stderr := fanout(t, trainArgs(append([]string{"--out", run}, extra...)...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", extra, code, stderr)
		}
		if extra != nil && !strings.Contains(stderr, "stopped before its first checkpoint; starting it from epoch 1") {
			t.Errorf("--resume did not say it starts again:\n%s", stderr)
		}
		if _, err := os.Stat(filepath.Join(run, checkpoint.LastCheckpoint)); err != nil {
			t.Errorf("%v: %v", extra, err)
		}
	}
}

// TestResumeNamesChangedSettings: a resumed run continues the saved one:
// only how long it runs (--epochs, --patience) may change, and it says so;
// any other setting that differs (--lr, which was once taken silently, or
// the seed) is refused, naming each with its old and new value; another
// dataset is refused naming it.
func TestResumeNamesChangedSettings(t *testing.T) {
	run := quickRun(t)
	oneLineError(t, "settings differ from the saved run's: lr 0.05 (was 0.0", append(trainArgs("--out", run, "--resume"), "--epochs", "2", "--lr", "0.05")...)
	oneLineError(t, "seed 7 (was 1)", append(trainArgs("--out", run, "--resume"), "--epochs", "3", "--seed", "7")...)
	code, _, stderr := fanout(t, append(trainArgs("--out", run, "--resume"), "--epochs", "2")...)
	if code != 0 || !strings.Contains(stderr, "resuming with epochs 2 (was 1)\n") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}
