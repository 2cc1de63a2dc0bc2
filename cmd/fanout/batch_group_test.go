package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDevicesBatchPerDevice: under --devices, --batch counts the seeds of
// each device: two CPU devices at 64 train with a global batch of 128, say
// so, write both to summary.json, and reproduce the one-device run at 128
// (the same epoch losses up to the order of the gradient sums, the same
// accuracies); --global-batch 128 is the same run, and a global batch that
// does not split, or both flags, is one clear error.
func TestDevicesBatchPerDevice(t *testing.T) {
	base := []string{"train", "--device", "cpu", "--epochs", "2", "--threads", "2"}
	runDir := func(args ...string) (summary map[string]any, losses []float64, stdout, stderr string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "run")
		code, out, errs := fanout(t, append(append(append([]string(nil), base...), args...), "--out", dir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &summary); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m struct {
				Loss float64 `json:"loss"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			losses = append(losses, m.Loss)
		}
		return summary, losses, out, errs
	}
	one, oneLoss, oneOut, _ := runDir("--batch", "128")
	two, twoLoss, twoOut, twoErr := runDir("--devices", "2", "--batch", "64")
	if !strings.Contains(twoErr, "64 seeds per device x 2 devices = global batch 128") {
		t.Errorf("the run does not say its batches:\n%s", twoErr)
	}
	if two["device_batch"] != 64.0 || two["global_batch"] != 128.0 || two["devices"] != 2.0 {
		t.Errorf("summary.json: device_batch %v, global_batch %v, devices %v; want 64, 128, 2", two["device_batch"], two["global_batch"], two["devices"])
	}
	if one["device_batch"] != 128.0 || one["global_batch"] != 128.0 || one["devices"] != 1.0 {
		t.Errorf("one device's summary.json: device_batch %v, global_batch %v, devices %v", one["device_batch"], one["global_batch"], one["devices"])
	}
	if len(oneLoss) != 2 || len(twoLoss) != 2 {
		t.Fatalf("epoch losses: %v alone, %v on two devices", oneLoss, twoLoss)
	}
	for i := range oneLoss {
		if d := math.Abs(oneLoss[i]-twoLoss[i]) / oneLoss[i]; !(d <= 1e-5) {
			t.Errorf("epoch %d: loss %v on two devices, %v alone (relative %.2g)", i+1, twoLoss[i], oneLoss[i], d)
		}
	}
	if accuracies(oneOut) != accuracies(twoOut) {
		t.Errorf("accuracies differ:\n%s\n%s", oneOut, twoOut)
	}
	g, _, gOut, _ := runDir("--devices", "2", "--global-batch", "128")
	if g["global_batch"] != 128.0 || g["device_batch"] != 64.0 || accuracies(gOut) != accuracies(twoOut) {
		t.Errorf("--global-batch 128 on two devices: %v, %v: %s", g["global_batch"], g["device_batch"], gOut)
	}
	oneLineError(t, "global-batch: 127 seeds do not split evenly over 2 devices", append(base, "--devices", "2", "--global-batch", "127")...)
	oneLineError(t, "give one", append(base, "--devices", "2", "--global-batch", "128", "--batch", "64")...)
}

// accuracies is a run's summary line without its wall time.
func accuracies(out string) string {
	line, _, _ := strings.Cut(out, " epochs in ")
	return withoutLoss(line)
}

// withoutLoss drops the test loss from a summary line: runs that sum in
// another order (a group, processes) reach the same accuracies with a
// loss that differs in its last digits.
func withoutLoss(line string) string {
	return regexp.MustCompile(`, loss [0-9.]+`).ReplaceAllString(line, "")
}
