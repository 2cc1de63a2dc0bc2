package job

import (
	"errors"
	"github.com/fanout-gnn/fanout/train"
	"slices"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"20GiB": 20 << 30, "512MiB": 512 << 20, "1.5G": 3 << 29, "4096": 4096, " 2 kb ": 2048} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1G", "0", "0.5", "0MiB", "NaN", "nanGiB", "Inf"} {
		if _, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "gpu-memory") {
			t.Errorf("ParseSize(%q): %v, want an error naming gpu-memory", in, err)
		}
	}
}

func TestFallbackReasonIsNeverBlank(t *testing.T) {
	for _, err := range []error{nil, errors.New(""), errors.New("  "), errors.New("CUDA driver (libcuda) not found (tried libcuda.so.1): ")} {
		if r := FallbackReason(err); strings.TrimSpace(r) == "" || strings.HasSuffix(r, ":") {
			t.Errorf("%v: reason %q", err, r)
		}
	}
	if r := FallbackReason(errors.New("no driver")); r != "no driver" {
		t.Errorf("reason %q", r)
	}
}

func TestReplicateBytes(t *testing.T) {
	for in, want := range map[string]int64{"0.5": 500, "1": 1000, "0": 0, "2KiB": 2048, "all": -1, "": 100, "auto": 100} {
		if got, err := ReplicateBytes(in, 1000); err != nil || got != want {
			t.Errorf("ReplicateBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ReplicateBytes("lots", 1000); err == nil || !strings.Contains(err.Error(), "replicate: ") {
		t.Errorf("lots: %v, want an error naming replicate", err)
	}
	// A plain number outside [0, 1] was read as a size in bytes.
	for _, in := range []string{"2.5", "-0.1", "NaN"} {
		if _, err := ReplicateBytes(in, 1000); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
			t.Errorf("%s: %v, want an error naming the fraction's range", in, err)
		}
	}
}

func TestParseBenchModes(t *testing.T) {
	for in, want := range map[string][]train.Mode{"auto": {train.Auto}, "both": {train.Eager, train.Replay}, "replay": {train.Replay}, "eager,replay": {train.Eager, train.Replay}} {
		if got, err := ParseBenchModes(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseBenchModes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseBenchModes("hybrid"); err == nil || !strings.Contains(err.Error(), "want eager, replay or both") {
		t.Errorf("bench hybrid: %v", err)
	}
}

func TestParseHotRatio(t *testing.T) {
	if r, auto, err := ParseHotRatio(" Auto "); err != nil || !auto || r != 0 {
		t.Errorf("auto: %v %v %v", r, auto, err)
	}
	if r, auto, err := ParseHotRatio("0.05"); err != nil || auto || r != 0.05 {
		t.Errorf("0.05: %v %v %v", r, auto, err)
	}
	for _, bad := range []string{"1.5", "-0.1", "lots"} {
		if _, _, err := ParseHotRatio(bad); err == nil || !strings.HasPrefix(err.Error(), "hot-ratio: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
