package job

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
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
	avail, ok := MemAvailable()
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
		BytesString(need), cfg.Layers, cfg.Hidden, ds.FeatDim, held, BytesString(float64(avail)))
}

// deviceMemory is implemented by backends that can say how much of their
// device's memory is free (CUDA: cuMemGetInfo).
type deviceMemory interface {
	MemInfo() (free, total int64, err error)
}

// checkDeviceMemory refuses, with the figures, a run whose model cannot fit
// a device's free memory, before the model and the step are allocated:
// the lower bound of checkHostMemory for one model of the group (a device
// holds one model and its share of cfg.Batch, with copies devices or
// processes sharing the batch). Backends that cannot say what is free are
// not checked; nor is the rest of the run (the graph, the features, the
// step's blocks), which the drivers size and refuse on their own.
func checkDeviceMemory(be backend.Backend, cfg train.Config, ds *dataset.Dataset, copies int) error {
	dm, ok := be.(deviceMemory)
	if !ok {
		return nil
	}
	free, total, err := dm.MemInfo()
	if err != nil {
		return nil // nothing to check against; allocation reports its own errors
	}
	share := cfg
	share.Batch = max(cfg.Batch/max(copies, 1), 1)
	need := modelBytes(share, ds.FeatDim, ds.NumClasses)
	if need <= float64(free) {
		return nil
	}
	return fmt.Errorf("memory: this run needs at least %s on %s (the model's weights, gradients and Adam moments, and a batch's rows, for %d layers of hidden %d on %d features) and it has %s free of %s; lower --hidden, --layers or --batch",
		BytesString(need), be.Name(), cfg.Layers, cfg.Hidden, ds.FeatDim, BytesString(float64(free)), BytesString(float64(total)))
}

// checkMemory is checkHostMemory and checkDeviceMemory.
func checkMemory(be backend.Backend, cfg train.Config, ds *dataset.Dataset, copies int) error {
	if err := checkHostMemory(be, cfg, ds, copies); err != nil {
		return err
	}
	return checkDeviceMemory(be, cfg, ds, copies)
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

// MemAvailable reads MemAvailable from /proc/meminfo, in bytes.
func MemAvailable() (int64, bool) {
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

// BytesString writes a size in GiB, MiB or bytes.
func BytesString(b float64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(b/(1<<30), 'f', 1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(math.Round(b), 'f', 0, 64) + " bytes"
}

// memInfoer is a backend that reports its device's free memory (CUDA).
type memInfoer interface {
	MemInfo() (free, total int64, err error)
}

// deviceMemory is the memory a device offers the job's data: --gpu-memory
// where given (budget), else what it has free; not ok for a device that
// cannot say (the CPU).
func (j *Job) deviceMemory(be backend.Backend) (mem int64, budget, ok bool) {
	m, can := be.(memInfoer)
	if !can {
		return 0, false, false
	}
	free, _, err := m.MemInfo()
	if err != nil {
		return 0, false, false
	}
	if j.Hybrid.GPUMemory != "" {
		if b, perr := ParseSize(j.Hybrid.GPUMemory); perr == nil {
			return b, true, true
		}
	}
	return free, false, true
}

// fitsDevice reports whether the dataset's features and topology fit the
// device's free memory with room for the step (a quarter of it); a backend
// that cannot say is taken to fit.
func fitsDevice(be backend.Backend, ds *dataset.Dataset, dt backend.DType, log io.Writer) bool {
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
	fmt.Fprintf(log, "mode auto: the features and topology (%.1f GiB) do not fit the GPU's free %.1f GiB with room for the step: hybrid mode\n",
		float64(need)/(1<<30), float64(free)/(1<<30))
	return false
}

// autoHybrid reports whether a run asked for in mode auto (requested),
// resolved to replay on be, takes the hybrid mode instead: where the
// features and topology do not fit the device's free memory with room for
// the step, a typed dataset's tables as one type's (the hybrid mode gives
// each type its tiers).
func autoHybrid(requested, resolved train.Mode, be backend.Backend, ds *dataset.Dataset, dt backend.DType, log io.Writer) bool {
	return resolved == train.Replay && requested == train.Auto && !fitsDevice(be, ds, dt, log)
}

// dataRoom is how much of a device's memory the resident data may take:
// three quarters, the rest kept for the step.
func dataRoom(mem int64) int64 { return mem * 3 / 4 }

// dataBytes is what a dataset takes resident: features held as dt,
// topology, labels and degrees.
func dataBytes(ds *dataset.Dataset, dt backend.DType) int64 {
	return tableSize(ds, dt) + topologyBytes(ds) + 8*ds.NumVertices()
}

// tableSize is the feature tables held as dt (every type's of a typed
// dataset).
func tableSize(ds *dataset.Dataset, dt backend.DType) int64 {
	var n int64
	for _, t := range ds.VertexTypes() {
		n += t.Count * int64(t.FeatDim) * int64(dt.Size())
	}
	return n
}

// topologyBytes is the whole graph resident: indptr and indices (of every
// relation of a typed dataset).
func topologyBytes(ds *dataset.Dataset) int64 {
	var n int64
	for _, r := range ds.EdgeTypes() {
		n += (r.Graph.NumNodes+1)*8 + r.Graph.NumEdges()*4
	}
	return n
}

// ParseSize reads a byte count of at least one byte: a number with an
// optional unit (B, KiB, MiB, GiB, TiB; K, M, G, T and KB, MB, GB, TB are
// read as the same powers of 1024).
func ParseSize(s string) (int64, error) {
	v, ok := sizeBytes(s)
	if !ok || v < 1 || v > 1<<62 {
		return 0, fmt.Errorf("gpu-memory: %s is not a size (want, e.g., 20GiB, 512MiB or a number of bytes)", quote.Quote(s))
	}
	return int64(v), nil
}

// sizeBytes is the bytes s names as ParseSize reads it, before any bound;
// ok is false where s is not a finite number with an optional unit
// (ParseFloat also reads "NaN" and "Inf").
func sizeBytes(s string) (bytes float64, ok bool) {
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
	return v * mul, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}
