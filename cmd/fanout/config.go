package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
)

// hyperFlags registers the training hyper-parameters on fs. Only flags the
// user sets are applied (apply), over the preset's or the config file's values.
type hyperFlags struct {
	fs                           *flag.FlagSet
	model                        string
	layers, hidden, batch, epoch int
	fanouts                      string
	lr, wd, dropout, inDropout   float64
	seed                         uint64
	evalEvery, patience          int
	fullEval                     bool
}

func addHyperFlags(fs *flag.FlagSet) *hyperFlags {
	h := &hyperFlags{fs: fs}
	fs.StringVar(&h.model, "model", "sage", "model: sage or gcn")
	fs.IntVar(&h.layers, "layers", 2, "number of GNN layers")
	fs.IntVar(&h.hidden, "hidden", 64, "hidden width")
	fs.StringVar(&h.fanouts, "fanouts", "10,5", "neighbours per hop from the seeds, comma-separated (-1 = all, 0 = none)")
	fs.IntVar(&h.batch, "batch", 256, "seed vertices per step")
	fs.IntVar(&h.epoch, "epochs", 20, "training epochs")
	fs.Float64Var(&h.lr, "lr", 0.003, "Adam learning rate")
	fs.Float64Var(&h.wd, "weight-decay", 0, "L2 weight decay")
	fs.Float64Var(&h.dropout, "dropout", 0.5, "dropout probability on hidden layers")
	fs.Float64Var(&h.inDropout, "input-dropout", 0, "dropout probability on the input features")
	fs.Uint64Var(&h.seed, "seed", 1, "random seed (initialisation, shuffling, sampling, dropout)")
	fs.IntVar(&h.evalEvery, "eval-every", 1, "validate every N epochs")
	fs.IntVar(&h.patience, "patience", 0, "stop after N validations without improvement (0 = never)")
	fs.BoolVar(&h.fullEval, "full-eval", false, "evaluate with all neighbours instead of the training fanouts")
	return h
}

// apply overrides cfg with the flags that were set on the command line.
func (h *hyperFlags) apply(cfg *train.Config) error {
	var err error
	h.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "model":
			cfg.Model = h.model
		case "layers":
			cfg.Layers = h.layers
		case "hidden":
			cfg.Hidden = h.hidden
		case "fanouts":
			if cfg.Fanouts, err = parseFanouts(h.fanouts); err != nil {
				err = fmt.Errorf("--fanouts: %w", err)
			}
		case "batch":
			cfg.Batch = h.batch
		case "epochs":
			cfg.Epochs = h.epoch
		case "lr":
			cfg.LR = float32(h.lr)
		case "weight-decay":
			cfg.WeightDecay = float32(h.wd)
		case "dropout":
			cfg.Dropout = float32(h.dropout)
		case "input-dropout":
			cfg.InDropout = float32(h.inDropout)
		case "seed":
			cfg.Seed = h.seed
		case "eval-every":
			cfg.EvalEvery = h.evalEvery
		case "patience":
			cfg.Patience = h.patience
		case "full-eval":
			cfg.FullEval = h.fullEval
		}
	})
	return err
}

// parseFanouts reads "15,10,5".
func parseFanouts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of integers like 15,10,5", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// presetConfig is the training configuration a preset defines.
func presetConfig(p rmat.Preset) train.Config {
	c := train.Defaults()
	c.Layers, c.Hidden, c.Batch = p.Layers, p.Hidden, p.Batch
	c.Fanouts = append([]int(nil), p.Fanouts...)
	c.Dropout, c.LR = p.Dropout, p.LR
	return c
}

// fileConfig is the YAML config file: the hyper-parameters plus where the
// data and outputs are. Unknown keys are errors.
type fileConfig struct {
	train.Config `yaml:",inline"`
	Data         string `yaml:"data"`
	Preset       string `yaml:"preset"`
	Device       string `yaml:"device"`
	Out          string `yaml:"out"`
	Threads      int    `yaml:"threads"`
}

// loadConfig reads a YAML config over base.
func loadConfig(path string, base train.Config) (fileConfig, error) {
	fc := fileConfig{Config: base}
	b, err := os.ReadFile(path)
	if err != nil {
		return fc, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return fc, fmt.Errorf("%s: %w", path, err)
	}
	return fc, nil
}
