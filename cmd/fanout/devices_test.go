package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTrainDevices: --devices 2 on the CPU with the one device's batch
// split over them (--global-batch) trains and reaches the one-device test
// accuracy; GPUs and an uneven global batch get plain errors.
func TestTrainDevices(t *testing.T) {
	var one, two, errb bytes.Buffer
	if code := run(context.Background(), []string{"train", "--device", "cpu", "--epochs", "2"}, &one, &errb); code != 0 {
		t.Fatalf("one device: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"train", "--device", "cpu", "--devices", "2", "--epochs", "2", "--global-batch", "256"}, &two, &errb); code != 0 {
		t.Fatalf("two devices: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "global batch 256 = 2 x 128") {
		t.Errorf("two devices: the start line does not say how the batch is split:\n%s", errb.String())
	}
	acc := func(s string) string { return strings.Fields(s)[2] }
	if acc(one.String()) != acc(two.String()) {
		t.Errorf("test accuracy on 2 devices %s, on one %s", acc(two.String()), acc(one.String()))
	}
	for _, c := range []struct{ args, want string }{
		{"--device cpu --devices 3 --epochs 1 --global-batch 256", "global-batch: 256 seeds do not split evenly over 3 devices"},
		{"--device cuda --devices 2 --epochs 1", "devices: "},
		{"--device cpu --devices -1", `devices: "-1", want a count of at least 1 or all`},
	} {
		errb.Reset()
		code := run(context.Background(), append([]string{"train"}, strings.Fields(c.args)...), &bytes.Buffer{}, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("train %s: exit %d, stderr %q; want an error containing %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestBenchDevices: bench --devices measures each count and reports the
// speed-up over the first; bad counts are plain errors.
func TestBenchDevices(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), strings.Fields("bench --preset tiny --device cpu --devices 1,2 --epochs 1"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "1 device(s): epoch") || !strings.Contains(out.String(), "2 device(s): epoch") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, bad := range []string{"0", "two", "1,,2"} {
		errb.Reset()
		if code := run(context.Background(), []string{"bench", "--preset", "tiny", "--device", "cpu", "--devices", bad}, &bytes.Buffer{}, &errb); code == 0 || !strings.Contains(errb.String(), "devices:") {
			t.Errorf("--devices %q: exit %d, %s", bad, code, errb.String())
		}
	}
}

// TestTrainDevicesHybrid: hybrid composes with several devices: each has
// its own tiered store, and the run reaches the one-device accuracy.
func TestTrainDevicesHybrid(t *testing.T) {
	var out, errb, one bytes.Buffer
	if code := run(context.Background(), strings.Fields("train --device cpu --devices 2 --mode hybrid --cache-rows 1000 --epochs 2 --global-batch 256"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"hybrid (device 0): cache 1000 rows", "hybrid (device 1): cache 1000 rows"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if code := run(context.Background(), strings.Fields("train --device cpu --epochs 2"), &one, &bytes.Buffer{}); code != 0 {
		t.Fatal("one device failed")
	}
	acc := func(s string) string { return strings.Fields(s)[2] }
	if acc(out.String()) != acc(one.String()) {
		t.Errorf("2 hybrid devices: %s; one device: %s", out.String(), one.String())
	}
}
