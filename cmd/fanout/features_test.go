package main

import (
	"strings"
	"testing"
)

// TestTrainDevicesShardFeatures: --shard-features on shards the rows over
// CPU devices as the topology, says how many bytes each device holds and
// where the gathered rows lived, and reaches the test accuracy of the
// whole table on every device (off); auto on CPU devices keeps the whole
// table, saying why. A bad value, and sharding where it cannot be done
// (hybrid tiers, layer-wise inference, bfloat16 rows), are one-line errors.
func TestTrainDevicesShardFeatures(t *testing.T) {
	args := []string{"train", "--device", "cpu", "--devices", "2", "--epochs", "1"}
	code, on, stderr := fanout(t, append(args, "--shard-features", "on")...)
	if code != 0 {
		t.Fatalf("on: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"features: sharded over 2 devices as the topology", "MiB (whole table", "feature rows (training and evaluation)", "from peers"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("on: stderr lacks %q:\n%s", want, stderr)
		}
	}
	code, off, stderr := fanout(t, append(args, "--shard-features", "off")...)
	if code != 0 || !strings.Contains(stderr, "on every device (--shard-features off)") {
		t.Fatalf("off: exit %d: %s", code, stderr)
	}
	acc := func(s string) string { return strings.Fields(s)[2] }
	if acc(on) != acc(off) {
		t.Errorf("test accuracy with sharded features %s, with the whole table %s", acc(on), acc(off))
	}
	code, _, stderr = fanout(t, args...)
	if code != 0 || !strings.Contains(stderr, "on every device (CPU devices share the host's memory)") {
		t.Errorf("auto: exit %d: %s", code, stderr)
	}
	code, _, stderr = fanout(t, append(args, "--shard-features", "on", "--replicate", "all")...)
	if code != 0 || !strings.Contains(stderr, "features: sharded over 2 devices by a partition of the graph") {
		t.Errorf("on without a topology: exit %d: %s", code, stderr)
	}
	oneLineError(t, "shard-features", append(args, "--shard-features", "sometimes")...)
	oneLineError(t, "shard-features: the hybrid mode", append(args, "--shard-features", "on", "--mode", "hybrid")...)
	oneLineError(t, "shard-features: --full-eval", append(args, "--shard-features", "on", "--full-eval")...)
	oneLineError(t, "shard-features: only float32", append(args, "--shard-features", "on", "--feature-dtype", "bfloat16")...)
}
