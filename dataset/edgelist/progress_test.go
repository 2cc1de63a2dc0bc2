package edgelist

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestETA checks the time left at the rate so far.
func TestETA(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		spent, want time.Duration
	}{
		{25, 100, 10 * time.Second, 30 * time.Second},
		{100, 100, time.Minute, 0},
		{1 << 31, 1<<32 + 1<<31, time.Minute, 2 * time.Minute}, // counts past int32
		{0, 100, time.Second, -1},
		{5, 0, time.Second, -1},
	} {
		if got := eta(tc.done, tc.total, tc.spent); got != tc.want {
			t.Errorf("eta(%d, %d, %s) = %s, want %s", tc.done, tc.total, tc.spent, got, tc.want)
		}
	}
}

// TestProgressPrinter checks that the printer writes a stage's start and
// end and holds back the reports between them within its interval.
func TestProgressPrinter(t *testing.T) {
	var buf bytes.Buffer
	show := ProgressPrinter(&buf, time.Hour)
	for _, p := range []Progress{
		{Stage: "read", Total: 3 << 30, Unit: "bytes", ETA: -1},
		{Stage: "read", Done: 1 << 30, Total: 3 << 30, Unit: "bytes", Edges: 5, ETA: 2 * time.Second},
		{Stage: "read", Done: 3 << 30, Total: 3 << 30, Unit: "bytes", Edges: 9, Runs: 2},
		{Stage: "combine", Pass: 1, Total: 10, Unit: "keys", ETA: -1},
		{Stage: "merge", Done: 10, Total: 10, Unit: "keys", Runs: 1},
	} {
		show(p)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"read: 0.0 MiB of 3.00 GiB (0%), 0 edges read, 0 runs, 0s elapsed",
		"read: 3.00 GiB of 3.00 GiB (100%), 9 edges read, 2 runs, 0s elapsed, ETA 0s",
		"combine (pass 1): 0 keys of 10 keys (0%), 0 edges read, 0 runs, 0s elapsed",
		"merge: 10 keys of 10 keys (100%), 0 edges read, 1 runs, 0s elapsed, ETA 0s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("printed\n%s\nwant\n%s", buf.String(), strings.Join(want, "\n"))
	}
}
