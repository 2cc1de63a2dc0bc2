package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/hybrid"
)

// memInfoer is a backend that reports its device's free memory (CUDA).
type memInfoer interface {
	MemInfo() (free, total int64, err error)
}

// fitsDevice reports whether the dataset's features and topology fit the
// device's free memory with room for the step (a quarter of it); a backend
// that cannot say is taken to fit.
func fitsDevice(be backend.Backend, ds *dataset.Dataset, dt backend.DType, stderr io.Writer) bool {
	m, ok := be.(memInfoer)
	if !ok {
		return true
	}
	free, _, err := m.MemInfo()
	if err != nil {
		return true
	}
	need := dataBytes(ds, dt)
	if need <= dataRoom(free) {
		return true
	}
	fmt.Fprintf(stderr, "mode auto: the features and topology (%.1f GiB) do not fit the GPU's free %.1f GiB with room for the step: hybrid mode\n",
		float64(need)/(1<<30), float64(free)/(1<<30))
	return false
}

// dataRoom is how much of a device's memory the resident data may take:
// three quarters, the rest kept for the step.
func dataRoom(mem int64) int64 { return mem * 3 / 4 }

// dataBytes is what a dataset takes resident: features held as dt,
// topology, labels and degrees.
func dataBytes(ds *dataset.Dataset, dt backend.DType) int64 {
	return tableSize(ds, dt) + topologyBytes(ds) + 8*ds.Graph.NumNodes
}

// tableSize is the feature table held as dt.
func tableSize(ds *dataset.Dataset, dt backend.DType) int64 {
	return ds.Graph.NumNodes * int64(ds.FeatDim) * int64(dt.Size())
}

// topologyBytes is the whole graph resident: indptr and indices.
func topologyBytes(ds *dataset.Dataset) int64 {
	return (ds.Graph.NumNodes+1)*8 + int64(len(ds.Graph.Indices))*4
}

// parseSize reads a byte count: a number with an optional unit (B, KiB,
// MiB, GiB, TiB; K, M, G, T and KB, MB, GB, TB are read as the same
// powers of 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mul    float64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}
	mul := 1.0
	up := strings.ToUpper(t)
	for _, u := range units {
		if strings.HasSuffix(up, u.suffix) {
			mul, t = u.mul, strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*mul > 1<<62 {
		return 0, fmt.Errorf("gpu-memory: %s is not a size (want, e.g., 20GiB, 512MiB or a number of bytes)", quoted(s))
	}
	return int64(v * mul), nil
}

// hybridOptions turns the hybrid flags into the driver's options for be:
// the budget is --gpu-memory, or what be's device has free less a margin.
func hybridOptions(rf *runFlags, be backend.Backend, log io.Writer) (hybrid.Options, error) {
	dt, err := rf.featureType()
	if err != nil {
		return hybrid.Options{}, err
	}
	hopt := hybrid.Options{CacheRows: int64(rf.cacheRows), Threads: rf.threads, Log: log, Replay: rf.replay(), FeatureDType: dt,
		Hot: hybrid.HotOptions{Ratio: rf.hotRatio, Staleness: rf.staleness, SuperBatch: rf.superBatch, Outputs: rf.hotRows == "outputs",
			NewCPU: func() (backend.Backend, error) { return cpu.New(rf.threads), nil }}}
	if rf.gpuMemory != "" {
		b, err := parseSize(rf.gpuMemory)
		if err != nil {
			return hopt, err
		}
		hopt.Budget = b
	} else if m, ok := be.(memInfoer); ok {
		free, _, err := m.MemInfo()
		if err != nil {
			return hopt, err
		}
		hopt.Budget = free - hybrid.DefaultMargin(free)
	}
	return hopt, nil
}

// runHybrid trains with the hybrid driver and prints its figures.
func runHybrid(ctx context.Context, rf *runFlags, be backend.Backend, desc string, ds *dataset.Dataset, cfg train.Config, opt train.Options, stdout, stderr io.Writer) error {
	if cfg.BottomProducts == "bfloat16" && (rf.hotAuto || rf.hotRatio != 0) {
		return fmt.Errorf("bottom-products: bfloat16, but the hybrid mode's hot vertices (--hot-ratio %s) need a float32 bottom layer; use --hot-ratio 0 or --bottom-products float32", rf.hotSpec)
	}
	hopt, err := hybridOptions(rf, be, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "training %s (%d layers, hidden %d, fanouts %s, batch %d) on %s with %s, hybrid mode\n",
		cfg.Model, cfg.Layers, cfg.Hidden, train.FormatFanouts(cfg.Fanouts), cfg.Batch, ds.Name, desc)
	be = withCapture(be)
	opt.Device = desc
	if rf.hotAuto {
		fmt.Fprintf(stderr, "timing a few super-batches of %d steps at each hot ratio (--hot-ratio auto):\n", hopt.Hot.SuperBatch)
		trials, err := hybrid.ChooseHotRatio(ctx, be, ds, cfg, &hopt, nil)
		if errors.Is(err, train.ErrInterrupted) || ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted")
			return interruptStatus(ctx)
		}
		if err != nil {
			return err
		}
		hybrid.PrintTrials(stderr, trials, hopt.Hot.Ratio)
		backend.MemoryOf(be).ResetPeak() // the run's peak, not the trials'
	}
	sum, st, err := hybrid.Run(ctx, be, ds, cfg, opt, hopt)
	if errors.Is(err, train.ErrInterrupted) {
		fmt.Fprintln(stderr, "interrupted")
		return interruptStatus(ctx)
	}
	if err != nil {
		return err
	}
	steps := max(st.Launches, 1)
	budget := fmt.Sprintf("of a %.1f MiB budget", float64(st.Placement.Budget)/(1<<20))
	if hopt.Budget == 0 {
		budget = "(no budget set)"
	}
	fmt.Fprintf(stderr, "hybrid: cache hit rate %.3f (%d of %d rows from host memory), %.1f MiB over PCIe per training launch (evaluation's gathers included), peak %.1f MiB %s\n",
		st.HitRate, st.HostRows, st.Rows, float64(st.PCIeBytes)/float64(steps)/(1<<20), float64(st.PeakBytes)/(1<<20), budget)
	if h := st.Hot; h != nil {
		what := "outputs"
		if h.Inputs {
			what = "inputs"
		}
		fmt.Fprintf(stderr, "hybrid: %d hot vertices: %d super-batches of rows (%s) in %.2f s of CPU work; training waited %.2f s for them\n",
			h.Vertices, h.SuperBatches, what, h.CPUSeconds, h.WaitSeconds)
	}
	printSummary(stdout, sum)
	return nil
}
