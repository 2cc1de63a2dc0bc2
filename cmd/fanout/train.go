package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/dist"
	"github.com/fanout-gnn/fanout/train"
)

// source is where a command's dataset comes from.
type source struct {
	data, preset string
	seed         uint64
	featDim      int // preset's feature width, when set (> 0)
}

// add registers the flags train and bench share (runOptions): where the
// data comes from, the device, threads, the replay envelope's margin and the
// GPU options; preset is the default --preset.
func (rf *runFlags) add(fs *flag.FlagSet, preset string) {
	rf.src.preset, rf.device, rf.margin, rf.overlap = preset, "auto", train.DefaultMargin, true
	rf.shardFeatures = "auto"
	rf.cuda.defaults()
	for _, o := range runOptions() {
		register(fs, o.name, o.usage, o.field(nil, rf))
	}
}

// runFlags are the flags of train and bench that are not hyper-parameters.
type runFlags struct {
	src          source
	config       string
	device       string
	out          string
	resume       bool
	force        bool
	threads      int
	mode         string
	margin       float64
	overlap      bool   // --overlap-sampling
	devices      int    // resolved from devicesSpec; 0: one device, no group
	devicesSpec  string // --devices: N or all
	deviceCounts string // bench --devices: the counts to measure, data-parallel
	cuda         cudaFlags
	featureDType string // float32 or bfloat16; "" until resolveConfig sets the dataset's
	batchGiven   bool   // --batch (or the config file's batch) was given: fitBatch's note says so
	globalBatch  int    // --global-batch: the seeds of one step over the whole group (0: --batch per device)
	// hybrid mode
	gpuMemory string
	cacheRows int
	replicate string // --devices: lists every device copies (replicateBytes)
	// --devices: feature rows sharded (auto, on or off: placeFeatures)
	// and, if so, not reused across batches
	shardFeatures  string
	noFeatureReuse bool
	ranksPerHost   int // --shard-features hosts: ranks that make a host (0: the launcher's, or all)
	// hybrid mode's hot vertices
	hotSpec    string  // --hot-ratio as given: a fraction, or auto
	hotRatio   float64 // the fraction (0 for auto until measured)
	hotAuto    bool    // --hot-ratio auto: chosen by a measurement
	staleness  int
	superBatch int
	hotRows    string
	// defaults that depend on the device (onGPUs)
	gpuProbed, gpu bool
	bottomDefault  bool // --bottom-products was set by gpuBottomProducts
}

// featureType is --feature-dtype as a backend type.
func (rf *runFlags) featureType() (backend.DType, error) { return parseFeatureDType(rf.featureDType) }

// check names the first run setting that is wrong.
func (rf *runFlags) check() error {
	if err := checkThreads(rf.threads); err != nil {
		return err
	}
	if !(rf.margin >= 1) {
		return fmt.Errorf("envelope-margin: %g, want at least 1", rf.margin)
	}
	if _, err := rf.featureType(); err != nil {
		return err
	}
	if err := checkShardFeatures(rf.shardFeatures); err != nil {
		return err
	}
	switch rf.devicesSpec {
	case "", "all":
	default:
		n, err := strconv.Atoi(rf.devicesSpec)
		if err != nil || n < 1 {
			return fmt.Errorf("devices: %s, want a count of at least 1 or all", quoted(rf.devicesSpec))
		}
		rf.devices = n
	}
	return nil
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	var rf runFlags
	rf.add(fs, "tiny")
	rf.mode = "auto"
	rf.cacheRows = -1
	rf.staleness, rf.superBatch, rf.hotRows, rf.hotSpec = 1, 32, "inputs", "auto"
	for _, o := range trainOptions() {
		register(fs, o.name, o.usage, o.field(nil, &rf))
	}
	fs.StringVar(&rf.config, "config", "", "YAML file of settings whose keys are these flags' names (weight-decay: 5e-4); flags given here override it")
	fs.BoolVar(&rf.resume, "resume", false, "continue the run in --out from its last.ckpt")
	fs.BoolVar(&rf.force, "force", false, "delete the run already in --out (checkpoints, metrics, summary) and start again")
	hf := addHyperFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %s (flags only; see fanout train -h)", quoted(pos[0]))
	}
	cfg, err := resolveConfig(fs, &rf, hf)
	if err != nil {
		return err
	}
	if rf.mode != "eager" && rf.mode != "replay" && rf.mode != "auto" && rf.mode != "hybrid" {
		return fmt.Errorf("mode: %s, want auto, eager, replay or hybrid", quoted(rf.mode))
	}
	if err := rf.parseHotRatio(); err != nil {
		return err
	}
	switch {
	case rf.staleness < 0:
		return fmt.Errorf("staleness: %d is negative", rf.staleness)
	case rf.superBatch < 1:
		return fmt.Errorf("super-batch: %d steps; need at least 1", rf.superBatch)
	case rf.hotRows != "inputs" && rf.hotRows != "outputs":
		return fmt.Errorf("hot-rows: %s is neither inputs nor outputs", quoted(rf.hotRows))
	}
	if rf.hotRatio != 0 && rf.mode != "hybrid" {
		return fmt.Errorf("hot-ratio: %v asks for CPU-computed hot vertices, which only --mode hybrid has (mode %s)", rf.hotRatio, rf.mode)
	}
	opt, err := rf.runDirOptions(stderr)
	if err != nil {
		return err
	}
	launch, err := dist.FromEnv(os.Environ())
	if err != nil {
		return err
	}
	if launch != nil {
		return runProcesses(ctx, launch, &rf, cfg, opt, stdout, stderr)
	}
	if rf.devicesSpec == "all" {
		if rf.devices, err = allDevices(&rf); err != nil {
			return fmt.Errorf("devices: %w", err)
		}
	}
	if rf.devices > 0 {
		return runDevices(ctx, &rf, cfg, opt, stdout, stderr)
	}
	be, desc, err := openBackend(rf.device, rf.threads, rf.cuda, stderr)
	if err != nil {
		return err
	}
	defer closeBackend(be)
	ds, err := loadDataset(rf.src, rf.threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	rf.fitBatch(&cfg, ds, 1, stderr)
	if err := checkHostMemory(be, cfg, ds, 1); err != nil {
		return err
	}
	auto := rf.mode == "auto"
	rf.mode = resolveMode(rf.mode, be)
	if rf.mode == "replay" && auto && !fitsDevice(be, ds, opt.FeatureDType, stderr) {
		rf.mode = "hybrid"
		if rf.bottomDefault { // the hybrid mode's hot vertices need float32 bottom rows
			cfg.BottomProducts = ""
		}
	}
	if rf.mode == "hybrid" {
		return runHybrid(ctx, &rf, be, desc, ds, cfg, opt, stdout, stderr)
	}
	fmt.Fprintf(stderr, "training %s (%d layers, hidden %d, fanouts %s, batch %d) on %s with %s, %s mode\n",
		cfg.Model, cfg.Layers, cfg.Hidden, train.FormatFanouts(cfg.Fanouts), cfg.Batch, ds.Name, desc, rf.mode)
	replay := rf.mode == "replay"
	if replay {
		be = withCapture(be)
	}
	opt.Device, opt.Replay = desc, replay
	tr, err := train.New(be, ds, cfg, opt)
	if err != nil {
		return err
	}
	defer tr.Close()
	sum, err := runDriver(ctx, tr, replay, rf.replay(), stderr)
	if errors.Is(err, train.ErrInterrupted) {
		if rf.out == "" {
			fmt.Fprintln(stderr, "interrupted (no --out: nothing saved)")
		} else {
			fmt.Fprintf(stderr, "interrupted: saved %s; continue with --resume\n", filepath.Join(rf.out, checkpoint.LastCheckpoint))
		}
		return interruptStatus(ctx)
	}
	if err != nil {
		return err
	}
	printSummary(stdout, sum)
	return nil
}

// printSummary prints a finished run's line.
func printSummary(stdout io.Writer, sum *train.Summary) {
	fmt.Fprintf(stdout, "test accuracy %.4f (best validation %.4f at epoch %d; %d epochs in %s)\n",
		sum.TestAcc, sum.BestValidAcc, sum.BestEpoch, sum.Epochs, (time.Duration(sum.Seconds*1e3) * time.Millisecond).Round(time.Millisecond))
}

// runDirOptions turns --out, --resume and --force into the trainer's
// options and, with --out, checks the run directory before any data is
// loaded (train.New checks again, under the directory's lock).
func (rf *runFlags) runDirOptions(progress io.Writer) (train.Options, error) {
	dt, err := rf.featureType()
	if err != nil {
		return train.Options{}, err
	}
	if rf.out != "" && rf.src.data != "" && within(rf.out, rf.src.data) {
		return train.Options{}, fmt.Errorf("--out %s is the dataset directory %s or inside it: the run's files would sit among the dataset's; choose an --out outside it", rf.out, rf.src.data)
	}
	if rf.resume && !rf.force && rf.out != "" && checkpoint.StoppedBeforeCheckpoint(rf.out) {
		fmt.Fprintf(progress, "--resume: %s has no %s: its run stopped before its first checkpoint; starting it from epoch 1\n", rf.out, checkpoint.LastCheckpoint)
		rf.resume = false
	}
	opt := train.Options{RunDir: rf.out, Resume: rf.resume, Force: rf.force, Progress: progress, FeatureDType: dt}
	if isTerminal(progress) {
		bar := newProgress(progress, "train")
		opt.OnProgress = func(stage string, done, total int) {
			if stage == "" {
				bar.done()
				return
			}
			bar.update(stage, int64(done), int64(total))
		}
	}
	mode, err := opt.RunMode()
	if err != nil {
		return opt, err
	}
	if rf.out == "" {
		if rf.resume || rf.force {
			return opt, errors.New("--resume and --force need --out RUNDIR")
		}
		return opt, nil
	}
	return opt, checkpoint.CheckRunDir(rf.out, mode)
}

// within reports whether path is dir or below it, symbolic links
// resolved where the paths exist.
func within(path, dir string) bool {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		return p
	}
	rel, err := filepath.Rel(real(dir), real(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// replay is the replay driver's options from the flags.
func (rf *runFlags) replay() train.ReplayOptions {
	return train.ReplayOptions{Margin: rf.margin, InOrder: !rf.overlap}
}

// runDriver trains with the replay or the eager driver.
func runDriver(ctx context.Context, tr *train.Trainer, replay bool, ropt train.ReplayOptions, stderr io.Writer) (*train.Summary, error) {
	if !replay {
		return tr.Run(ctx)
	}
	sum, st, err := tr.RunReplay(ctx, ropt)
	if st != nil {
		fmt.Fprintf(stderr, "replay: %d captures, %d overflows re-run, envelope %.1f MiB (ideal %.1f MiB)\n",
			st.Captures, st.Overflows, float64(st.Envelope.Bytes)/(1<<20), float64(st.Envelope.IdealBytes)/(1<<20))
	}
	return sum, err
}

// resolveConfig layers the defaults (the preset's, for a preset or a
// generated preset on disk), the config file and the flags given, and
// checks the result, the batch against the training split included.
func resolveConfig(fs *flag.FlagSet, rf *runFlags, hf *hyperFlags) (train.Config, error) {
	set := setFlags(fs)
	var fc *fileConfig
	if rf.config != "" {
		var err error
		if fc, err = loadConfig(rf.config); err != nil {
			return train.Config{}, err
		}
	}
	if err := fc.apply(append(runOptions(), trainOptions()...), nil, rf, set); err != nil {
		return train.Config{}, err
	}
	base := train.Defaults()
	stored := "" // the dataset's feature type, once known
	if rf.src.data == "" {
		p, err := rmat.Lookup(rf.src.preset)
		if err != nil {
			return base, fmt.Errorf("preset: %w", err)
		}
		base = presetConfig(p)
		stored = dataset.DTypeFloat32
	} else if m, err := dataset.ReadManifest(filepath.Join(rf.src.data, dataset.ManifestFile)); err == nil {
		stored = cmp.Or(m.FeatureDType, dataset.DTypeFloat32)
		// A generated preset on disk trains with the preset's model by default.
		if p, err := rmat.Lookup(m.Name); err == nil && strings.HasPrefix(m.Source, "rmat") {
			base = presetConfig(p)
		}
	}
	if rf.featureDType == "" && stored != "" {
		// Features are held as bfloat16 on one GPU and as the dataset
		// stores them elsewhere, unless asked.
		rf.featureDType = cmp.Or(rf.gpuFeatureDType(), stored)
	}
	cfg := base
	if err := fc.apply(hyperOptions(), &cfg, nil, set); err != nil {
		return cfg, err
	}
	hf.apply(&cfg)
	if cfg.BottomProducts == "" {
		cfg.BottomProducts = rf.gpuBottomProducts(cfg)
		rf.bottomDefault = cfg.BottomProducts != ""
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if err := givenApplies(cfg, set["heads"] || fc.has("heads")); err != nil {
		return cfg, err
	}
	if err := rf.check(); err != nil {
		return cfg, err
	}
	rf.batchGiven = set["batch"] || fc.has("batch")
	return cfg, nil
}

// givenApplies refuses settings the user gave that the run would ignore
// (the configuration itself stores 0 heads for 1, as older checkpoints
// do): --heads 0 trained with one head, and --gin-eps learn trained a
// model without an ε.
func givenApplies(cfg train.Config, headsGiven bool) error {
	switch {
	case headsGiven && cfg.Heads < 1:
		return fmt.Errorf("heads: %d, want 1 to 1024", cfg.Heads)
	case cfg.GINEps == "learn" && cfg.Model != "gin":
		return fmt.Errorf("gin-eps: learn, but only gin has an ε to learn (model %s)", cfg.Model)
	}
	return nil
}

// checkData checks that ds is the dataset the checkpoint at path was
// trained on (its fingerprint); with allow, a difference is only noted.
func checkData(path string, ck *checkpoint.Checkpoint, ds *dataset.Dataset, allow bool, stderr io.Writer) error {
	if note := checkpoint.OldFormatNote(path, ck); note != "" {
		fmt.Fprintln(stderr, note)
	}
	diff := ck.Dataset.Mismatch(checkpoint.Fingerprint(ds))
	switch {
	case diff == "":
		return nil
	case allow:
		fmt.Fprintf(stderr, "note: %s was trained on %s; %s differs (%s); evaluating anyway (--allow-other-data)\n", path, ck.Dataset.Name, ds.Name, diff)
		return nil
	}
	return fmt.Errorf("%s was trained on %s, and %s differs: %s; pass --allow-other-data to evaluate on it anyway", path, ck.Dataset.Name, ds.Name, diff)
}

// loadDataset opens --data or generates --preset in memory.
func loadDataset(src source, threads int, stderr io.Writer) (*dataset.Dataset, error) {
	if src.data != "" {
		ds, err := dataset.Open(src.data)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		return ds, nil
	}
	p, err := rmat.Lookup(src.preset)
	if err != nil {
		return nil, fmt.Errorf("--preset: %w", err)
	}
	if src.featDim < 0 {
		return nil, fmt.Errorf("feat-dim: %d, want a positive width", src.featDim)
	}
	if src.featDim > 0 {
		p.FeatDim = src.featDim
		p.Name = fmt.Sprintf("%s-f%d", p.Name, src.featDim)
	}
	seed := src.seed
	if seed == 0 {
		seed = 1
	}
	start := time.Now()
	bar := newProgress(stderr, "generating "+p.Name)
	ds, err := rmat.Generate(p, rmat.Options{Seed: seed, Threads: threads, Progress: bar.update})
	bar.done()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "generated %s in %s: %d vertices, %d edges\n", p.Name,
		time.Since(start).Round(time.Millisecond), ds.Graph.NumNodes, ds.Graph.NumEdges())
	return ds, nil
}

func presetNames() string {
	s := ""
	for i, n := range rmat.Names() {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// parseHotRatio reads --hot-ratio: auto, or a fraction in [0, 1].
func (rf *runFlags) parseHotRatio() error {
	rf.hotAuto = strings.EqualFold(strings.TrimSpace(rf.hotSpec), "auto")
	if rf.hotAuto {
		rf.hotRatio = 0
		return nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rf.hotSpec), 64)
	if err != nil || v < 0 || v > 1 {
		return fmt.Errorf("hot-ratio: %s is neither auto nor a fraction in [0, 1]", quoted(rf.hotSpec))
	}
	rf.hotRatio = v
	return nil
}
