package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/train/job"
)

// TestMemoryThatCannotExist: a model far beyond the host's memory is one
// error with the figures, before anything is allocated (it ended in
// "fatal error: runtime: out of memory" and a 200-line trace); a run that
// fits is not refused. The run is a process of its own: before the check,
// it died.
func TestMemoryThatCannotExist(t *testing.T) {
	if _, ok := job.MemAvailable(); !ok {
		t.Skip("no /proc/meminfo: the host's available memory is not known, and not checked")
	}
	cmd := exec.Command(os.Args[0], "train", "--device", "cpu", "--threads", "1", "--epochs", "1", "--hidden", "1000000000000")
	cmd.Env = append(os.Environ(), "FANOUT_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if err == nil || cmd.ProcessState.ExitCode() != 1 || !strings.HasPrefix(last, "fanout train: memory: this run needs at least ") ||
		!strings.Contains(last, "available; lower --hidden") || strings.Contains(string(out), "goroutine") {
		t.Fatalf("exit %d, last line %q; want one memory error with the figures:\n%.2000s", cmd.ProcessState.ExitCode(), last, out)
	}
	if code, _, stderr := fanout(t, trainArgs()...); code != 0 {
		t.Fatalf("a run that fits: %s", stderr)
	}
}
