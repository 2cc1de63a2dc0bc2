package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
)

// source is where a command's dataset comes from.
type source struct {
	data, preset string
	seed         uint64
}

// add registers the flags train and bench share: where the data comes
// from, the device, threads, the replay envelope's margin and the GPU options.
func (rf *runFlags) add(fs *flag.FlagSet, preset string) {
	fs.StringVar(&rf.src.data, "data", "", "dataset directory (default: generate --preset in memory)")
	fs.StringVar(&rf.src.preset, "preset", preset, "built-in preset to generate in memory when --data is not given: "+presetNames())
	fs.StringVar(&rf.device, "device", "auto", "auto, cpu, cuda or cuda:N")
	fs.IntVar(&rf.threads, "threads", 0, "CPU worker threads (0 = all cores)")
	fs.Float64Var(&rf.margin, "envelope-margin", 1.15, "replay: capacities = largest observed batch sizes x this margin")
	rf.cuda.add(fs)
}

// runFlags are the flags of train that are not hyper-parameters.
type runFlags struct {
	src     source
	config  string
	device  string
	out     string
	resume  bool
	threads int
	mode    string
	margin  float64
	cuda    cudaFlags
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	var rf runFlags
	rf.add(fs, "tiny")
	fs.StringVar(&rf.config, "config", "", "YAML file with training settings (flags override it)")
	fs.StringVar(&rf.out, "out", "", "run directory for checkpoints, metrics.jsonl and summary.json (default: none)")
	fs.BoolVar(&rf.resume, "resume", false, "continue from OUT/last.ckpt")
	fs.StringVar(&rf.mode, "mode", "auto", "driver: eager (host-driven), replay (whole step captured once and replayed) or auto (replay on a GPU, eager on the CPU)")
	hf := addHyperFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see fanout train -h)", pos[0])
	}
	if rf.mode != "eager" && rf.mode != "replay" && rf.mode != "auto" {
		return fmt.Errorf("--mode %q: want auto, eager or replay", rf.mode)
	}
	if rf.margin < 1 {
		return fmt.Errorf("--envelope-margin %g: want at least 1", rf.margin)
	}
	cfg, err := resolveConfig(fs, &rf, hf)
	if err != nil {
		return err
	}
	if rf.resume && rf.out == "" {
		return errors.New("--resume needs --out RUNDIR")
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
	rf.mode = resolveMode(rf.mode, be)
	if rf.out != "" {
		if err := os.MkdirAll(rf.out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	fmt.Fprintf(stderr, "training %s (%d layers, hidden %d, fanouts %s, batch %d) on %s with %s, %s mode\n",
		cfg.Model, cfg.Layers, cfg.Hidden, train.FormatFanouts(cfg.Fanouts), cfg.Batch, ds.Name, desc, rf.mode)
	replay := rf.mode == "replay"
	if replay {
		be = withCapture(be)
	}
	tr, err := train.New(be, ds, cfg, train.Options{RunDir: rf.out, Resume: rf.resume, Progress: stderr, Device: desc, Replay: replay})
	if err != nil {
		return err
	}
	defer tr.Close()
	var sum *train.Summary
	if replay {
		var st *train.ReplayStats
		sum, st, err = tr.RunReplay(ctx, train.ReplayOptions{Margin: rf.margin})
		if st != nil {
			fmt.Fprintf(stderr, "replay: %d captures, %d overflows re-run, envelope %.1f MiB (ideal %.1f MiB)\n",
				st.Captures, st.Overflows, float64(st.Envelope.Bytes)/(1<<20), float64(st.Envelope.IdealBytes)/(1<<20))
		}
	} else {
		sum, err = tr.Run(ctx)
	}
	if errors.Is(err, train.ErrInterrupted) {
		fmt.Fprintf(stderr, "interrupted: saved %s/last.ckpt; continue with --resume\n", orNone(rf.out))
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "test accuracy %.4f (best validation %.4f at epoch %d; %d epochs in %s)\n",
		sum.TestAcc, sum.BestValidAcc, sum.BestEpoch, sum.Epochs, (time.Duration(sum.Seconds*1e3) * time.Millisecond).Round(time.Millisecond))
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(no run directory)"
	}
	return s
}

// resolveConfig layers the preset's defaults, the config file and the flags.
func resolveConfig(fs *flag.FlagSet, rf *runFlags, hf *hyperFlags) (train.Config, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	base := train.Defaults()
	if rf.config != "" {
		fc, err := loadConfig(rf.config, base)
		if err != nil {
			return base, err
		}
		if fc.Preset != "" && !set["preset"] {
			rf.src.preset = fc.Preset
		}
		if fc.Data != "" && !set["data"] {
			rf.src.data = fc.Data
		}
		if fc.Device != "" && !set["device"] {
			rf.device = fc.Device
		}
		if fc.Out != "" && !set["out"] {
			rf.out = fc.Out
		}
		if fc.Threads != 0 && !set["threads"] {
			rf.threads = fc.Threads
		}
	}
	if rf.src.data == "" {
		p, err := rmat.Lookup(rf.src.preset)
		if err != nil {
			return base, fmt.Errorf("--preset: %w", err)
		}
		base = presetConfig(p)
	} else if m, err := dataset.ReadManifest(filepath.Join(rf.src.data, dataset.ManifestFile)); err == nil {
		// A generated preset on disk trains with the preset's model by default.
		if p, err := rmat.Lookup(m.Name); err == nil && strings.HasPrefix(m.Source, "rmat") {
			base = presetConfig(p)
		}
	}
	cfg := base
	if rf.config != "" {
		fc, err := loadConfig(rf.config, base)
		if err != nil {
			return cfg, err
		}
		cfg = fc.Config
	}
	if err := hf.apply(&cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
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
