package main

import (
	"strings"
	"testing"
)

// TestTrainHotVertices: --hot-ratio trains in the hybrid mode and says
// what the hot vertices cost; its settings are checked before any data is
// loaded, each with a one-line error naming the flag.
func TestTrainHotVertices(t *testing.T) {
	code, out, stderr := fanout(t, "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "0.1", "--super-batch", "4", "--epochs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"hot vertices: 1639 (10.0%)", "aggregated inputs of layer 0", "super-batches of rows (inputs)", "test accuracy"} {
		if !strings.Contains(stderr+out, want) {
			t.Errorf("output lacks %q:\n%s%s", want, stderr, out)
		}
	}
	code, out, stderr = fanout(t, "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "0.1", "--hot-rows", "outputs", "--epochs", "1")
	if code != 0 || !strings.Contains(stderr, "super-batches of rows (outputs)") {
		t.Fatalf("--hot-rows outputs: exit %d:\n%s%s", code, stderr, out)
	}
	// auto (the default): a timed trial per candidate, 0 included.
	code, out, stderr = fanout(t, "train", "--device", "cpu", "--mode", "hybrid", "--super-batch", "2", "--epochs", "1")
	for _, want := range []string{"(--hot-ratio auto)", "hot ratio 0    :", "ms per step over 6 steps", "chosen (--hot-ratio sets it)", "test accuracy"} {
		if code != 0 || !strings.Contains(stderr+out, want) {
			t.Errorf("--hot-ratio auto: exit %d, output lacks %q:\n%s%s", code, want, stderr, out)
		}
	}
	oneLineError(t, "hot-ratio", "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "lots")
	oneLineError(t, "hot-rows", "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "0.1", "--hot-rows", "both")
	oneLineError(t, "hot-ratio", "train", "--device", "cpu", "--hot-ratio", "0.1")
	oneLineError(t, "hot-ratio", "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "1.5")
	oneLineError(t, "staleness", "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "0.1", "--staleness", "-1")
	oneLineError(t, "super-batch", "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "0.1", "--super-batch", "0")
	oneLineError(t, "hot-ratio", "train", "--device", "cpu", "--devices", "2", "--mode", "hybrid", "--hot-ratio", "0.1")
}

// TestTrainDevicesTopology: with several devices the graph is partitioned
// and the run says how and where the lists were read; --replicate all
// keeps the whole graph on every device; a bad --replicate is an error.
func TestTrainDevicesTopology(t *testing.T) {
	code, _, stderr := fanout(t, "train", "--device", "cpu", "--devices", "2", "--epochs", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"topology: 2 parts (edge cut", "sampling read", "from peers"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = fanout(t, "train", "--device", "cpu", "--devices", "2", "--epochs", "1", "--replicate", "all")
	if code != 0 || strings.Contains(stderr, "topology:") {
		t.Errorf("--replicate all: exit %d, stderr:\n%s", code, stderr)
	}
	oneLineError(t, "replicate", "train", "--device", "cpu", "--devices", "2", "--replicate", "lots")
}
