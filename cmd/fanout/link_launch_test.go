package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// linkResult is a link run's closing line without its timing.
func linkResult(out string) string { return resultLine(out, "test ROC-AUC", " (best") }

// TestLaunchLink: a link predictor trained by two CPU processes under
// fanout launch (MPI) reaches the result of two devices of one process.
func TestLaunchLink(t *testing.T) {
	mpiEnv(t)
	base := []string{"train", "--task", "link", "--device", "cpu", "--threads", "1", "--epochs", "1", "--epoch-steps", "20"}
	for _, mode := range [][]string{nil, {"--mode", "hybrid", "--cache-rows", "4000"}} {
		args := append(slices.Clone(base), mode...)
		var one bytes.Buffer
		if code := run(context.Background(), append(args, "--devices", "2"), &one, &bytes.Buffer{}); code != 0 {
			t.Fatalf("%v: two devices of one process failed:\n%s", mode, one.String())
		}
		var lo, le bytes.Buffer
		if code := run(context.Background(), append([]string{"launch", "--nproc", "2", "--"}, args...), &lo, &le); code != 0 {
			t.Fatalf("%v: fanout launch: exit %d\n%s%s", mode, code, lo.String(), le.String())
		}
		if got, want := linkResult(lo.String()), linkResult(one.String()); got != want {
			t.Fatalf("%v: fanout launch: %q; one process of two devices: %q\n%s", mode, got, want, lo.String())
		}
		if mode != nil && !strings.Contains(lo.String()+le.String(), "hybrid (rank 1)") {
			t.Fatalf("%v: the ranks' tiers are not reported:\n%s", mode, lo.String())
		}
	}
}

// TestLinkDevicesResume: a link run of two devices of one process,
// stopped after an epoch, continues with --resume to the straight run's
// result.
func TestLinkDevicesResume(t *testing.T) {
	args := func(out string, epochs string) []string {
		return []string{"train", "--task", "link", "--device", "cpu", "--threads", "1", "--devices", "2", "--epoch-steps", "10",
			"--epochs", epochs, "--out", out}
	}
	dir := t.TempDir()
	var straight, first, resumed bytes.Buffer
	if code := run(context.Background(), args(dir+"/straight", "2"), &straight, &straight); code != 0 {
		t.Fatalf("straight run failed:\n%s", straight.String())
	}
	if code := run(context.Background(), args(dir+"/run", "1"), &first, &first); code != 0 {
		t.Fatalf("first epoch failed:\n%s", first.String())
	}
	if code := run(context.Background(), append(args(dir+"/run", "2"), "--resume"), &resumed, &resumed); code != 0 {
		t.Fatalf("resume failed:\n%s", resumed.String())
	}
	if got, want := linkResult(resumed.String()), linkResult(straight.String()); got != want {
		t.Fatalf("resumed: %q; straight: %q", got, want)
	}
	if strings.Contains(resumed.String(), "epoch 1/2 ") || !strings.Contains(resumed.String(), "epoch 2/2 ") {
		t.Fatalf("the resumed run trained other epochs than the second:\n%s", resumed.String())
	}
}

// TestLaunchLinkResume: a link job of two processes under fanout launch,
// stopped after an epoch, continues with --resume (every rank reading the
// run directory) to the straight run's result.
func TestLaunchLinkResume(t *testing.T) {
	mpiEnv(t)
	args := func(out, epochs string) []string {
		return []string{"launch", "--nproc", "2", "--", "train", "--task", "link", "--device", "cpu", "--threads", "1",
			"--epoch-steps", "10", "--epochs", epochs, "--out", out}
	}
	dir := t.TempDir()
	var straight, first, resumed bytes.Buffer
	for _, c := range []struct {
		args []string
		out  *bytes.Buffer
	}{{args(dir+"/straight", "2"), &straight}, {args(dir+"/run", "1"), &first}, {append(args(dir+"/run", "2"), "--resume"), &resumed}} {
		if code := run(context.Background(), c.args, c.out, c.out); code != 0 {
			t.Fatalf("%v: exit %d\n%s", c.args, code, c.out.String())
		}
	}
	if got, want := linkResult(resumed.String()), linkResult(straight.String()); got != want {
		t.Fatalf("resumed: %q; straight: %q", got, want)
	}
	if strings.Contains(resumed.String(), "epoch 1/2 ") || !strings.Contains(resumed.String(), "epoch 2/2 ") {
		t.Fatalf("the resumed job trained other epochs than the second:\n%s", resumed.String())
	}
}
