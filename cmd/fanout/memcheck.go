package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// checkHostMemory refuses, with the figures, a run on CPU backends (be is
// one of them; other backends are not checked) whose model cannot fit the
// host's available memory (MemAvailable), before anything is allocated:
// copies is how many models the host holds (devices or processes of this
// host), each taking its share of cfg.Batch. The figure is a lower bound: every layer of
// every model has a weight of its input by its output width, held four
// times (weights, gradients and Adam's two moments) as float32, and every
// step holds at least a batch of rows of each hidden width. A run past it
// ended in "fatal error: runtime: out of memory" and a 200-line trace
// (--hidden 100000000). Where MemAvailable cannot be read it checks
// nothing.
func checkHostMemory(be backend.Backend, cfg train.Config, ds *dataset.Dataset, copies int) error {
	avail, ok := memAvailable()
	if !ok || !strings.HasPrefix(be.Name(), "cpu") {
		return nil
	}
	copies = max(copies, 1)
	share := cfg
	share.Batch = max(cfg.Batch/copies, 1)
	need := modelBytes(share, ds.FeatDim, ds.NumClasses) * float64(copies)
	if need <= float64(avail) {
		return nil
	}
	held := ""
	if copies > 1 {
		held = fmt.Sprintf(", on each of %d devices or processes of this host", copies)
	}
	return fmt.Errorf("memory: this run needs at least %s (the model's weights, gradients and Adam moments, and a batch's rows, for %d layers of hidden %d on %d features%s) and this host has %s available; lower --hidden, --layers or --batch",
		bytesString(need), cfg.Layers, cfg.Hidden, ds.FeatDim, held, bytesString(float64(avail)))
}

// modelBytes is the lower bound of checkHostMemory for one model, in
// bytes (a float, as a size can exceed int64 arithmetic's comfort).
func modelBytes(cfg train.Config, featDim, classes int) float64 {
	var values float64
	for l := 0; l < cfg.Layers; l++ {
		in, out := float64(cfg.Hidden), float64(cfg.Hidden)
		if l == 0 {
			in = float64(featDim)
		}
		if l == cfg.Layers-1 {
			out = float64(classes)
		} else {
			values += float64(cfg.Batch) * out // a batch's outputs of this hidden layer
		}
		values += 4 * in * out
	}
	return 4 * values
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// bytesString writes a size in GiB, MiB or bytes.
func bytesString(b float64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(b/(1<<30), 'f', 1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(math.Round(b), 'f', 0, 64) + " bytes"
}
