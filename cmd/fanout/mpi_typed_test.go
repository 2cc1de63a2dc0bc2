package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/train"
)

// epochLosses are the training and validation losses of every epoch in
// the run directory's metrics.jsonl, in order.
func epochLosses(t *testing.T, run string) []float64 {
	t.Helper()
	var losses []float64
	for _, st := range epochStats(t, run) {
		losses = append(losses, st.Loss, st.Valid[train.MetricLoss])
	}
	return losses
}

// TestMPITypedMatchesDevices: a typed dataset whose types all have
// features (igbh-sim at 1/5000) trains in two CPU processes, under mpirun
// replayed and under fanout launch eagerly, to the result and the
// per-epoch losses of one process's two CPU devices (--devices 2), rank 0
// saying every rank holds every table.
func TestMPITypedMatchesDevices(t *testing.T) {
	mpiEnv(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "igbh")
	if code, stdout, stderr := fanout(t, "gen", "igbh-sim", "--scale", "0.0002", "--threads", "2", "--out", data); code != 0 {
		t.Fatalf("gen: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, mode := range []string{"replay", "eager"} {
		args := []string{"train", "--data", data, "--device", "cpu", "--threads", "1", "--layers", "2", "--hidden", "16", "--fanouts", "5,3",
			"--epochs", "2", "--dropout", "0", "--global-batch", "128", "--mode", mode}
		one := filepath.Join(dir, mode+"-devices")
		code, stdout, stderr := fanout(t, append(args, "--devices", "2", "--out", one)...)
		if code != 0 {
			t.Fatalf("%s: two devices of one process: exit %d\n%s%s", mode, code, stdout, stderr)
		}
		want := result(stdout)
		procs := filepath.Join(dir, mode+"-procs")
		var out string
		if mode == "replay" {
			cmd := exec.Command("mpirun", append([]string{"-n", "2", "--oversubscribe", os.Args[0]}, append(args, "--out", procs)...)...)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: mpirun: %v\n%s", mode, err, b)
			}
			out = string(b)
		} else {
			code, launched := launchJob(t, append(append([]string{"--nproc", "2", "--"}, args...), "--out", procs)...)
			if code != 0 {
				t.Fatalf("%s: fanout launch: exit %d\n%s", mode, code, launched)
			}
			out = launched
		}
		if got := result(out); got != want || !strings.Contains(out, "placement: igbh-sim is typed: every relation and feature table on every rank") {
			t.Fatalf("%s: two processes: %q; two devices of one process: %q\n%s", mode, got, want, out)
		}
		got, wantLosses := epochLosses(t, procs), epochLosses(t, one)
		if len(got) != 4 || !slices.Equal(got, wantLosses) {
			t.Fatalf("%s: two processes' epoch losses %v; two devices': %v", mode, got, wantLosses)
		}
	}
}

// TestLaunchTypedRefusesLearnedRows: a typed dataset with a type without
// features (hetero-tiny's authors learn their rows) is refused under the
// launcher in one line naming the launcher and the type, and the job
// ends.
func TestLaunchTypedRefusesLearnedRows(t *testing.T) {
	mpiEnv(t)
	code, out := launchJob(t, "--nproc", "2", "--", "train", "--preset", "hetero-tiny", "--device", "cpu", "--threads", "1", "--epochs", "1")
	refusal := regexp.MustCompile(`(?m)^\[rank \d\] fanout train: rank \d of 2: launch: hetero-tiny is typed, and its type author has no features: [^\n]*; ending the job$`)
	if code == 0 || !refusal.MatchString(out) || strings.Contains(out, "goroutine") || strings.Contains(out, "epoch 1/1") {
		t.Fatalf("exit %d; want the job refused in one line naming author:\n%s", code, out)
	}
}
