package job

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// smallDevice stands in for a GPU that says how much of its memory is free.
type smallDevice struct {
	*cpu.Backend
	free, total int64
}

func (d smallDevice) MemInfo() (int64, int64, error) { return d.free, d.total, nil }
func (d smallDevice) Name() string                   { return "cuda:0 test device" }

// A model that cannot fit the device's free memory is refused with the
// figures before anything is allocated (a GPU run of --hidden 100000000
// failed deep in its first allocation); one that fits is not.
func TestDeviceMemoryRefusesAModelThatCannotFit(t *testing.T) {
	ds, cfg := traintest.Tiny(t)
	cfg.Layers, cfg.Hidden, cfg.Batch = 3, 100_000_000, 1024
	dev := smallDevice{Backend: cpu.New(1), free: 70 << 30, total: 80 << 30}
	err := checkDeviceMemory(dev, cfg, ds, 1)
	if err == nil || !strings.Contains(err.Error(), "on cuda:0 test device") || !strings.Contains(err.Error(), "70.0 GiB free of 80.0 GiB") ||
		!strings.Contains(err.Error(), "lower --hidden") {
		t.Fatalf("hidden %d on a device with 70 GiB free: %v", cfg.Hidden, err)
	}
	cfg.Hidden = 256
	if err := checkDeviceMemory(dev, cfg, ds, 1); err != nil {
		t.Fatalf("hidden 256: %v", err)
	}
	if err := checkDeviceMemory(cpu.New(1), train.Config{Layers: 3, Hidden: 100_000_000, Batch: 1024}, ds, 1); err != nil {
		t.Fatalf("a backend that cannot say what is free is not checked: %v", err)
	}
}

// --replicate auto keeps the whole graph on every device when each says
// its free memory and the dataset fits it with room for the step (or
// --gpu-memory's budget, where given); it partitions when one device is too
// small, when a device cannot say (the CPU backend), in the hybrid mode,
// with features sharded on purpose, and whenever --replicate names a
// budget.
func TestWholeGraphFits(t *testing.T) {
	ds, _ := traintest.Tiny(t)
	need := dataBytes(ds, backend.F32)
	big := smallDevice{Backend: cpu.New(1), free: 4 * need, total: 8 * need}
	small := smallDevice{Backend: cpu.New(1), free: need, total: 8 * need} // three quarters of it is too little
	ranks := func(bes ...backend.Backend) []multigpu.Rank {
		var rs []multigpu.Rank
		for _, be := range bes {
			rs = append(rs, multigpu.Rank{Backend: be})
		}
		return rs
	}
	for _, c := range []struct {
		name      string
		replicate string
		gpuMemory string
		shard     string
		mode      train.Mode
		ranks     []multigpu.Rank
		want      bool
	}{
		{"auto, both fit", "", "", "", train.Replay, ranks(big, big), true},
		{"auto spelt out", "auto", "", "auto", train.Auto, ranks(big, big), true},
		{"one too small", "auto", "", "", train.Replay, ranks(big, small), false},
		{"a device that cannot say", "", "", "", train.Replay, ranks(big, cpu.New(1)), false},
		{"a budget named", "0.1", "", "", train.Replay, ranks(big, big), false},
		{"--gpu-memory too small", "", "1KiB", "", train.Replay, ranks(big, big), false},
		{"the hybrid mode", "", "", "", train.Hybrid, ranks(big, big), false},
		{"features sharded on purpose", "", "", "on", train.Replay, ranks(big, big), false},
		{"features over hosts", "", "", "hosts", train.Replay, ranks(big, big), false},
	} {
		j := Job{Placement: Placement{Replicate: c.replicate, ShardFeatures: c.shard}}
		j.Hybrid.GPUMemory = c.gpuMemory
		got, fits := j.wholeGraphFits(ds, c.ranks, c.mode)
		if fits != c.want {
			t.Errorf("%s: fits %v, want %v", c.name, fits, c.want)
		}
		if fits && got != need {
			t.Errorf("%s: need %d bytes, want the dataset's %d", c.name, got, need)
		}
	}
}

// TestAutoHybrid: mode auto takes the hybrid mode where the features and
// topology do not fit the device's free memory, for a typed dataset as for
// one of one type; a dataset that fits, and a mode asked for, stay as they are.
func TestAutoHybrid(t *testing.T) {
	tiny, _ := traintest.Tiny(t)
	p, err := rmat.Lookup("hetero-tiny")
	if err != nil {
		t.Fatal(err)
	}
	typed := traintest.Generate(t, p)
	for _, ds := range []*dataset.Dataset{tiny, typed} {
		need := dataBytes(ds, backend.F32)
		small := smallDevice{Backend: cpu.New(1), free: need, total: need}
		large := smallDevice{Backend: cpu.New(1), free: 8 * need, total: 8 * need}
		var log strings.Builder
		for _, c := range []struct {
			requested train.Mode
			dev       smallDevice
			want      bool
		}{{train.Auto, small, true}, {train.Auto, large, false}, {train.Replay, small, false}} {
			if got := autoHybrid(c.requested, train.Replay, c.dev, ds, backend.F32, &log); got != c.want {
				t.Errorf("%s, mode %s, %d bytes free for %d: hybrid %v, want %v", ds.Name, c.requested, c.dev.free, need, got, c.want)
			}
		}
		if !strings.Contains(log.String(), "hybrid mode") {
			t.Errorf("%s: the log does not say why: %q", ds.Name, log.String())
		}
	}
}
