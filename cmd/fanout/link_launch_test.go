package main

import (
	"bytes"
	"context"
	"testing"
)

// linkResult is a link run's closing line without its timing.
func linkResult(out string) string { return resultLine(out, "test ROC-AUC", " (best") }

// TestLaunchLink: a link predictor trained by two CPU processes under
// fanout launch (MPI) reaches the result of two devices of one process.
func TestLaunchLink(t *testing.T) {
	mpiEnv(t)
	args := []string{"train", "--task", "link", "--device", "cpu", "--threads", "1", "--epochs", "1", "--epoch-steps", "20"}
	var one bytes.Buffer
	if code := run(context.Background(), append(args, "--devices", "2"), &one, &bytes.Buffer{}); code != 0 {
		t.Fatalf("two devices of one process failed:\n%s", one.String())
	}
	var lo, le bytes.Buffer
	if code := run(context.Background(), append([]string{"launch", "--nproc", "2", "--"}, args...), &lo, &le); code != 0 {
		t.Fatalf("fanout launch: exit %d\n%s%s", code, lo.String(), le.String())
	}
	if got, want := linkResult(lo.String()), linkResult(one.String()); got != want {
		t.Fatalf("fanout launch: %q; one process of two devices: %q\n%s", got, want, lo.String())
	}
}
