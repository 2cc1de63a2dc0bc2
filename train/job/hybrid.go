package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/hybrid"
)

// hybridOptions turns the hybrid flags into the driver's options for be:
// the budget is --gpu-memory, or what be's device has free less a margin.
func (j *Job) hybridOptions(be backend.Backend, log io.Writer) (hybrid.Options, error) {
	dt, err := j.featureType()
	if err != nil {
		return hybrid.Options{}, err
	}
	h := j.Hybrid
	hopt := hybrid.Options{CacheRows: int64(h.CacheRows), Threads: j.Threads, Log: log, Replay: j.Replay, FeatureDType: dt, FetchAhead: h.FetchAhead, Lookahead: h.Lookahead, DiskBuffered: h.DiskBuffered, StageHost: h.StageHost,
		Hot: hybrid.HotOptions{Ratio: h.HotRatio, Staleness: h.Staleness, SuperBatch: h.SuperBatch, Outputs: h.HotOutputs,
			NewCPU: func() (backend.Backend, error) { return cpu.New(j.Threads), nil }}}
	if h.GPUMemory != "" {
		b, err := ParseSize(h.GPUMemory)
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
	if h.HostMemory != "" {
		if hopt.HostMemory, err = parseHostMemory(h.HostMemory); err != nil {
			return hopt, err
		}
	}
	if hopt.Band, err = ParseBand(h.HostBand); err != nil {
		return hopt, err
	}
	return hopt, nil
}

// ParseBand reads --host-band: a size, 0 (in any unit) for none
// (hybrid.Options.Band < 0) and "" for the default (0).
func ParseBand(s string) (int64, error) {
	band := strings.TrimSpace(s)
	switch v, ok := sizeBytes(band); {
	case band == "":
		return 0, nil
	case ok && v == 0:
		return -1, nil
	default:
		b, err := ParseSize(band)
		if err != nil {
			return 0, fmt.Errorf("host-band: %s is not a size (want, e.g., 512MiB, 1GiB, a number of bytes or 0 for none)", quote.Quote(s))
		}
		return b, nil
	}
}

// parseHostMemory reads --host-memory: a size.
func parseHostMemory(s string) (int64, error) {
	b, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("host-memory: %s is not a size (want, e.g., 32GiB, 512MiB or a number of bytes)", quote.Quote(s))
	}
	return b, nil
}

// hybridSource is the job's source, its features left on disk where
// --host-memory is below the size of the dataset's feature files (the
// hybrid mode, one device, a dataset directory): feat.npy, or a typed
// dataset's types/<type>/feat.npy summed over its types. The host tiers
// then hold what fits, and the rest is read from the files
// (hybrid.Options.HostMemory). --host-memory elsewhere is an error naming
// the flag, and so is --stage-host-rows without it.
func (j *Job) hybridSource() (Source, error) {
	src, spec := j.Source, j.Hybrid.HostMemory
	if spec == "" {
		if j.Hybrid.StageHost {
			return src, fmt.Errorf("stage-host-rows: stages the host tier's rows beside the rows read from disk, and without --host-memory (hybrid mode) no features are left on disk")
		}
		if j.Hybrid.Lookahead > 1 {
			return src, fmt.Errorf("lookahead: starts the disk tier's gathers steps ahead, and without --host-memory (hybrid mode) there is no disk tier")
		}
		return src, nil
	}
	limit, err := parseHostMemory(spec)
	if err != nil {
		return src, err
	}
	switch {
	case j.Mode != train.Hybrid:
		return src, fmt.Errorf("host-memory: %s caps the hybrid mode's host tier of features, and the mode is %s (give --mode hybrid)", quote.Quote(spec), j.Mode)
	case j.Devices != 0:
		return src, fmt.Errorf("host-memory: a disk tier of features is one device's; train without --devices")
	case src.Data == "":
		return src, fmt.Errorf("host-memory: a disk tier reads the features of a dataset directory (--data), and %s is generated in memory (write it with fanout gen)", quote.Quote(src.Preset))
	}
	files, size, err := featureFiles(src.Data)
	if err != nil {
		return src, fmt.Errorf("--data: %w", err)
	}
	src.Open.FeaturesOnDisk = size > limit
	if src.Open.FeaturesOnDisk {
		fmt.Fprintf(j.Log, "host-memory: %s of features in %s, over the %s host tier: the rest stay on disk, read when a step needs them\n",
			BytesString(float64(size)), files, BytesString(float64(limit)))
	}
	return src, nil
}

// featureFiles names the feature files of the dataset directory dir (its
// feat.npy; a typed dataset's types/<type>/feat.npy of every type with
// features, as "dir/types/{a,b}/feat.npy") and sums their sizes in bytes.
func featureFiles(dir string) (string, int64, error) {
	manifest := filepath.Join(dir, dataset.ManifestFile)
	typed, err := dataset.IsTyped(manifest)
	if err != nil || !typed {
		feat := filepath.Join(dir, dataset.FeatFile)
		st, serr := os.Stat(feat)
		if serr != nil {
			return "", 0, serr
		}
		return feat, st.Size(), nil
	}
	m, err := dataset.ReadTypedManifest(manifest)
	if err != nil {
		return "", 0, err
	}
	var names []string
	var size int64
	for _, e := range m.Types {
		if e.FeatDim == 0 {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, dataset.TypeDir(e.Name), dataset.FeatFile))
		if err != nil {
			return "", 0, err
		}
		names, size = append(names, e.Name), size+st.Size()
	}
	return filepath.Join(dir, dataset.TypeDir("{"+strings.Join(names, ",")+"}"), dataset.FeatFile), size, nil
}

// runHybrid trains with the hybrid driver and prints its figures.
func (j *Job) runHybrid(ctx context.Context, be backend.Backend, desc string, ds *dataset.Dataset, cfg train.Config, opt train.Options) (*train.Summary, error) {
	if cfg.TaskName() == train.TaskLink || ds.Typed() || ds.FeatureFile != nil {
		// A link step and a typed one have no hot vertices (checkTask and
		// prepareTyped refused a ratio), nor a run whose features are on
		// disk (the hot vertices' CPU reads the whole table in memory).
		j.Hybrid.HotAuto = false
	}
	if cfg.BottomProducts == "bfloat16" && (j.Hybrid.HotAuto || j.Hybrid.HotRatio != 0) {
		return nil, fmt.Errorf("bottom-products: bfloat16, but the hybrid mode's hot vertices (--hot-ratio %s) need a float32 bottom layer; use --hot-ratio 0 or --bottom-products float32", j.Hybrid.HotSpec)
	}
	hopt, err := j.hybridOptions(be, j.Log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(j.Log, "training %s on %s with %s, hybrid mode\n", describeRun(cfg), ds.Name, desc)
	be = WithCapture(be)
	opt.Device = desc
	if j.Hybrid.HotAuto {
		fmt.Fprintf(j.Log, "timing a few super-batches of %d steps at each hot ratio (--hot-ratio auto):\n", hopt.Hot.SuperBatch)
		trials, err := hybrid.ChooseHotRatio(ctx, be, ds, cfg, &hopt, nil)
		if errors.Is(err, train.ErrInterrupted) || ctx.Err() != nil {
			fmt.Fprintln(j.Log, "interrupted")
			return nil, ErrInterrupted
		}
		if err != nil {
			return nil, err
		}
		hybrid.PrintTrials(j.Log, trials, hopt.Hot.Ratio)
		backend.MemoryOf(be).ResetPeak() // the run's peak, not the trials'
	}
	if !ds.Typed() { // typed models keep float32 bottom products (prepareTyped)
		j.hybridBottom(&cfg, be, ds, hopt.Hot.Ratio)
	}
	sum, st, err := hybrid.Run(ctx, be, ds, cfg, opt, hopt)
	if err != nil {
		return nil, j.interrupted(err)
	}
	steps := max(st.Launches, 1)
	budget := fmt.Sprintf("of a %.1f MiB budget", float64(st.Placement.Budget)/(1<<20))
	if hopt.Budget == 0 {
		budget = "(no budget set)"
	}
	fmt.Fprintf(j.Log, "hybrid: cache hit rate %.3f (%d of %d rows from host memory), %.1f MiB over PCIe per training launch (evaluation's gathers included), peak %.1f MiB %s\n",
		st.HitRate, st.HostRows, st.Rows, float64(st.PCIeBytes)/float64(steps)/(1<<20), float64(st.PeakBytes)/(1<<20), budget)
	if tr := st.Tiers; tr != nil {
		fmt.Fprintf(j.Log, "hybrid: rows by tier (training and evaluation): GPU cache %d (%.1f MiB), host memory %d (%.1f MiB over PCIe), disk %d (%.1f MiB read)\n",
			tr.CacheRows, float64(tr.CacheBytes)/(1<<20), tr.HostRows, float64(tr.HostBytes)/(1<<20), tr.DiskRows, float64(tr.DiskBytes)/(1<<20))
		for _, e := range st.Epochs {
			us, place := e.HostFunction()
			fmt.Fprintf(j.Log, "hybrid: epoch %d: GPU cache %.1f MiB, host memory %.1f MiB, disk %.1f MiB; %d gathers' host work, %.0f µs each (placing the ids %.0f µs)\n",
				e.Epoch, float64(e.CacheBytes)/(1<<20), float64(e.HostBytes)/(1<<20), float64(e.DiskBytes)/(1<<20), e.Gathers, us, place)
		}
	}
	if r := st.Lists; r != nil {
		fmt.Fprintf(j.Log, "hybrid: sampling read %d neighbour lists (training, evaluation and the envelope's observation): %.1f%% from GPU memory, %.1f%% from host memory\n",
			r.Lists(), 100*float64(r.Local)/float64(max(r.Lists(), 1)), 100*float64(r.Host)/float64(max(r.Lists(), 1)))
	}
	if h := st.Hot; h != nil {
		what := "outputs"
		if h.Inputs {
			what = "inputs"
		}
		fmt.Fprintf(j.Log, "hybrid: %d hot vertices: %d super-batches of rows (%s) in %.2f s of CPU work; training waited %.2f s for them\n",
			h.Vertices, h.SuperBatches, what, h.CPUSeconds, h.WaitSeconds)
	}
	return sum, nil
}

// hybridBottom gives the hybrid run the GPU's default bottom products
// (bfloat16 GraphSAGE products, 10% of a products-sim step) once it has no
// hot vertices (ratio 0, asked or chosen by --hot-ratio auto), whose
// float32 rows kept the default off, unless --bottom-products was given.
func (j *Job) hybridBottom(cfg *train.Config, be backend.Backend, ds *dataset.Dataset, ratio float64) {
	if j.BottomGiven || ratio != 0 || cfg.BottomProducts != "" {
		return
	}
	_, gpu := be.(memInfoer) // a device that says its free memory: a GPU
	if b := GPUBottomProducts(*cfg, ds.FeatDim, j.CUDA.TF32, false, func() bool { return gpu }); b != "" {
		cfg.BottomProducts = b
		fmt.Fprintf(j.Log, "hybrid: no hot vertices, so the bottom layer multiplies in %s (--bottom-products float32 keeps float32)\n", b)
	}
}

// ParseHotRatio reads the hybrid mode's hot ratio: auto (chosen by a
// measurement; the ratio is 0 until then), or a fraction in [0, 1].
func ParseHotRatio(spec string) (ratio float64, auto bool, err error) {
	if strings.EqualFold(strings.TrimSpace(spec), "auto") {
		return 0, true, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(spec), 64)
	if err != nil || v < 0 || v > 1 {
		return 0, false, fmt.Errorf("hot-ratio: %s is neither auto nor a fraction in [0, 1]", quote.Quote(spec))
	}
	return v, false, nil
}
