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

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/cluster"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/job"
	"github.com/fanout-gnn/fanout/train/link"
)

// add registers the flags train and bench share (runOptions): where the
// data comes from, the device, threads, the replay envelope's margin and the
// GPU options; preset is the default --preset.
func (rf *runFlags) add(fs *flag.FlagSet, preset string) {
	rf.j.Source.Preset, rf.j.Device, rf.j.Replay.Margin, rf.overlap = preset, "auto", train.DefaultMargin, true
	rf.j.Placement.ShardFeatures = "auto"
	rf.j.CUDA = cudaDefaults()
	for _, o := range runOptions() {
		job.Register(fs, o.name, o.usage, o.field(nil, rf))
	}
}

// runFlags are the flags of train and bench: the job they describe (j),
// and what is resolved into it.
type runFlags struct {
	j            job.Job
	config       string
	out          string
	tensorboard  string
	resume       bool
	force        bool
	overlap      bool   // --overlap-sampling
	devicesSpec  string // --devices: N or all
	deviceCounts string // bench --devices: the counts to measure, data-parallel
	hotRows      string // the hybrid mode's --hot-rows: inputs or outputs
	// defaults that depend on the device (onGPUs)
	gpuProbed, gpu bool
}

// check names the first run setting that is wrong.
func (rf *runFlags) check() error {
	if err := job.CheckThreads(rf.j.Threads); err != nil {
		return err
	}
	if !(rf.j.Replay.Margin >= 1) {
		return fmt.Errorf("envelope-margin: %g, want at least 1", rf.j.Replay.Margin)
	}
	if _, err := job.ParseFeatureDType(rf.j.FeatureDType); err != nil {
		return err
	}
	if err := job.CheckShardFeatures(rf.j.Placement.ShardFeatures); err != nil {
		return err
	}
	switch rf.devicesSpec {
	case "", "all":
	default:
		n, err := strconv.Atoi(rf.devicesSpec)
		if err != nil || n < 1 {
			return fmt.Errorf("devices: %s, want a count of at least 1 or all", quoted(rf.devicesSpec))
		}
		rf.j.Devices = n
	}
	return nil
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	var rf runFlags
	rf.add(fs, "tiny")
	rf.j.Hybrid.CacheRows = -1
	rf.j.Hybrid.Staleness, rf.j.Hybrid.SuperBatch, rf.hotRows, rf.j.Hybrid.HotSpec = 1, 32, "inputs", "auto"
	for _, o := range trainOptions() {
		job.Register(fs, o.name, o.usage, o.field(nil, &rf))
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
	if rf.j.Hybrid.HotRatio, rf.j.Hybrid.HotAuto, err = job.ParseHotRatio(rf.j.Hybrid.HotSpec); err != nil {
		return err
	}
	switch {
	case rf.j.Hybrid.Staleness < 0:
		return fmt.Errorf("staleness: %d is negative", rf.j.Hybrid.Staleness)
	case rf.j.Hybrid.SuperBatch < 1:
		return fmt.Errorf("super-batch: %d steps; need at least 1", rf.j.Hybrid.SuperBatch)
	case rf.hotRows != "inputs" && rf.hotRows != "outputs":
		return fmt.Errorf("hot-rows: %s is neither inputs nor outputs", quoted(rf.hotRows))
	}
	if rf.j.Hybrid.HotRatio != 0 && rf.j.Mode != train.Hybrid {
		return fmt.Errorf("hot-ratio: %v asks for CPU-computed hot vertices, which only --mode hybrid has (mode %s)", rf.j.Hybrid.HotRatio, rf.j.Mode)
	}
	if err := rf.checkPlaces(); err != nil {
		return err
	}
	opt, err := rf.runDirOptions(stderr)
	if err != nil {
		return err
	}
	j := rf.job(cfg, opt, stderr)
	if j.Launch, err = cluster.FromEnv(os.Environ()); err != nil {
		return err
	}
	sum, err := job.Run(ctx, j)
	err = settingError(err) // a setting refused against the data, by its flag
	if err != nil || sum == nil {
		return err
	}
	printSummary(stdout, sum)
	return nil
}

// checkPlaces checks, before any work, settings that name a place or a
// size the run will use: --gpu-memory and --host-band are sizes, and only
// the hybrid mode's (on a CPU device, --gpu-memory is the budget of the
// device it stands in for);
// --tensorboard is a directory that can be made.
func (rf *runFlags) checkPlaces() error {
	if m := rf.j.Hybrid.GPUMemory; m != "" {
		if _, err := job.ParseSize(m); err != nil {
			return err
		}
		if rf.j.Mode != train.Hybrid {
			return fmt.Errorf("gpu-memory: %s is the hybrid mode's budget of GPU memory, and the mode is %s (give --mode hybrid)", quoted(m), rf.j.Mode)
		}
	}
	if b := rf.j.Hybrid.HostBand; b != "" {
		if _, err := job.ParseBand(b); err != nil {
			return err
		}
		if rf.j.Mode != train.Hybrid {
			return fmt.Errorf("host-band: %s is the hybrid mode's band of host memory, and the mode is %s (give --mode hybrid)", quoted(b), rf.j.Mode)
		}
	}
	if rf.tensorboard != "" {
		if err := os.MkdirAll(rf.tensorboard, 0o755); err != nil {
			return fmt.Errorf("tensorboard: %w", err)
		}
	}
	return nil
}

// job is the job the flags describe, with the resolved configuration and
// the run directory's options.
func (rf *runFlags) job(cfg train.Config, opt train.Options, log io.Writer) job.Job {
	j := rf.j
	if rf.devicesSpec == "all" {
		j.Devices = job.AllDevices
	}
	j.Config, j.Options, j.Log, j.Progress = cfg, opt, log, bars(log)
	j.Replay.InOrder, j.Hybrid.HotOutputs = !rf.overlap, rf.hotRows == "outputs"
	return j
}

// bars makes the progress bars of a job's long work on w.
func bars(w io.Writer) func(string) (func(string, int64, int64), func()) {
	return func(title string) (func(string, int64, int64), func()) {
		bar := newProgress(w, title)
		return bar.update, bar.done
	}
}

// printSummary prints a finished run's line.
func printSummary(stdout io.Writer, sum *train.Summary) {
	fmt.Fprintln(stdout, sum.Line())
}

// runDirOptions turns --out, --resume and --force into the trainer's
// options and, with --out, checks the run directory before any data is
// loaded (train.New checks again, under the directory's lock).
func (rf *runFlags) runDirOptions(progress io.Writer) (train.Options, error) {
	dt, err := job.ParseFeatureDType(rf.j.FeatureDType)
	if err != nil {
		return train.Options{}, err
	}
	if rf.out != "" && rf.j.Source.Data != "" && within(rf.out, rf.j.Source.Data) {
		return train.Options{}, fmt.Errorf("--out %s is the dataset directory %s or inside it: the run's files would sit among the dataset's; choose an --out outside it", rf.out, rf.j.Source.Data)
	}
	if rf.resume && !rf.force && rf.out != "" && !link.HasLegacyRun(rf.out) && checkpoint.StoppedBeforeCheckpoint(rf.out) {
		fmt.Fprintf(progress, "--resume: %s has no %s: its run stopped before its first checkpoint; starting it from epoch 1\n", rf.out, checkpoint.LastCheckpoint)
		rf.resume = false
	}
	opt := train.Options{RunDir: rf.out, TensorBoard: rf.tensorboard, Resume: rf.resume, Force: rf.force, Progress: progress, FeatureDType: dt}
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
	if link.HasLegacyRun(rf.out) {
		return opt, nil // a link run of an earlier version: the job moves or refuses it
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
	if rf.j.Source.Data == "" {
		p, err := rmat.Lookup(rf.j.Source.Preset)
		if err != nil {
			return base, fmt.Errorf("preset: %w", err)
		}
		base = job.PresetConfig(p)
		stored = dataset.DTypeFloat32
	} else if m, err := dataset.ReadManifest(filepath.Join(rf.j.Source.Data, dataset.ManifestFile)); err == nil {
		stored = cmp.Or(m.FeatureDType, dataset.DTypeFloat32)
		// A generated preset on disk trains with the preset's model by default.
		if p, err := rmat.Lookup(m.Name); err == nil && strings.HasPrefix(m.Source, "rmat") {
			base = job.PresetConfig(p)
		}
	} else if m, err := dataset.ReadTypedManifest(filepath.Join(rf.j.Source.Data, dataset.ManifestFile)); err == nil {
		// A typed dataset's features take the same default as one type's.
		stored = cmp.Or(m.FeatureDType, dataset.DTypeFloat32)
	}
	if rf.j.FeatureDType == "" && stored != "" {
		// Features are held as bfloat16 on one GPU and as the dataset
		// stores them elsewhere, unless asked.
		rf.j.FeatureDType = cmp.Or(job.GPUFeatureDType(rf.onGPUs, rf.j.Placement.ShardFeatures), stored)
	}
	cfg, err := layerHyper(base, fc, hf, set)
	if err != nil {
		return cfg, err
	}
	rf.j.BottomGiven = cfg.BottomProducts != ""
	if cfg.BottomProducts == "" {
		cfg.BottomProducts = job.GPUBottomProducts(cfg, 0, rf.j.CUDA.TF32, rf.j.Mode == train.Hybrid, rf.onGPUs)
		rf.j.BottomDefault = cfg.BottomProducts != ""
	}
	if err := cfg.Validate(); err != nil {
		return cfg, settingError(err)
	}
	if err := givenApplies(cfg, func(name string) bool { return set[name] || fc.has(name) }); err != nil {
		return cfg, err
	}
	if err := rf.check(); err != nil {
		return cfg, err
	}
	rf.j.BatchGiven = set["batch"] || fc.has("batch")
	rf.j.ModelGiven = set["model"] || fc.has("model")
	return cfg, nil
}

// layerHyper layers the config file's and the flags' hyper-parameters over
// base. A link task starts from link prediction's defaults
// (train.LinkDefaults); a node task refuses link prediction's settings,
// naming the first given.
func layerHyper(base train.Config, fc *fileConfig, hf *hyperFlags, set map[string]bool) (train.Config, error) {
	layer := func(c train.Config) (train.Config, error) {
		err := fc.apply(hyperOptions(), &c, nil, set)
		hf.apply(&c)
		return c, err
	}
	cfg, err := layer(base)
	if err != nil || cfg.TaskName() != train.TaskLink {
		for _, o := range hyperOptions() {
			if given := set[o.name] || fc.has(o.name); given && linkOnly(o.name) && err == nil {
				return cfg, fmt.Errorf("%s: a link prediction setting, but the task is %s (give --task link)", o.name, cfg.TaskName())
			}
		}
		return cfg, err
	}
	base.UseLinkDefaults()
	return layer(base)
}

// linkOnly reports whether a hyper-parameter belongs to link prediction.
func linkOnly(name string) bool {
	switch name {
	case "negatives", "negative-dist", "negative-sharing", "decoder", "exclude", "embed", "eval-negatives", "eval-edges":
		return true
	}
	return false
}

// givenApplies refuses settings the user gave (given) that the run would
// ignore, where the configuration stores a value that means "none": 0
// heads (trained with one, as older checkpoints store it), --gin-eps learn
// on a model without an ε, and an evaluation interval or a target of 0
// (no validation within epochs, no target).
func givenApplies(cfg train.Config, given func(name string) bool) error {
	switch {
	case given("heads") && cfg.Heads < 1:
		return fmt.Errorf("heads: %d, want 1 to 1024", cfg.Heads)
	case cfg.GINEps == "learn" && cfg.Model != "gin":
		return fmt.Errorf("gin-eps: learn, but only gin has an ε to learn (model %s)", cfg.Model)
	case given("eval-every-steps") && cfg.EvalEverySteps < 1:
		return fmt.Errorf("eval-every-steps: %d, want at least 1 step (leave it out to validate at epochs' ends only)", cfg.EvalEverySteps)
	case given("eval-every-epochs") && !(cfg.EvalEveryEpochs > 0):
		return fmt.Errorf("eval-every-epochs: %g, want a fraction of an epoch, 0 < F <= 1 (leave it out to validate at epochs' ends only)", cfg.EvalEveryEpochs)
	case given("target-acc") && !(cfg.TargetAcc > 0):
		return fmt.Errorf("target-acc: %g, want 0 < A <= 1 (leave it out for no target)", cfg.TargetAcc)
	}
	return nil
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
