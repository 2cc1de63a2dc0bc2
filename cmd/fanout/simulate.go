package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/job"
	"github.com/fanout-gnn/fanout/train/multigpu/simulate"
)

// simFlags are fanout simulate's flags: the simulation, and how to print
// it.
type simFlags struct {
	sim           job.Simulation
	json, perRank bool
}

func (f *simFlags) register(fs *flag.FlagSet) {
	l := simulate.DefaultLinks()
	fs.StringVar(&f.sim.Source.Data, "data", "", "dataset directory (default: generate --preset in memory)")
	fs.StringVar(&f.sim.Source.Preset, "preset", "tiny", "built-in preset to generate in memory when --data is not given: "+presetNames())
	fs.IntVar(&f.sim.Hosts, "hosts", 1, "hosts of the simulated job")
	fs.IntVar(&f.sim.Devices, "devices", 2, "devices (GPUs) per host")
	fs.IntVar(&f.sim.Steps, "steps", 20, "steps simulated, of every rank")
	fs.IntVar(&f.sim.Batch, "batch", 0, "seeds per device per step (default: the preset's; the global batch is batch x devices x hosts)")
	fs.IntVar(&f.sim.GlobalBatch, "global-batch", 0, "seeds of one step over all devices, split evenly (instead of --batch per device)")
	fs.StringVar(&f.sim.Fanouts, "fanouts", "", "neighbours per hop from the seeds, comma-separated (default: the preset's)")
	fs.Uint64Var(&f.sim.Seed, "seed", train.Defaults().Seed, "training seed (shuffling, sampling)")
	fs.StringVar(&f.sim.Replicate, "replicate", job.DefaultReplicate, "lists every device copies: a fraction of all list bytes, a size (512MiB), 0, all (the whole graph on every device), or auto (0.1 here: the simulation weighs no device's memory)")
	fs.StringVar(&f.sim.ShardFeatures, "shard-features", "auto", "auto (sharded as on when the float32 table does not fit --gpu-memory, else off), on (sharded over a host's devices as the topology, read from peers in place), off (the whole table on every device), hosts (spread over the job's ranks in hosts, fetched with all-to-alls) or flat (partitioned over every rank, fetched with all-to-alls)")
	fs.StringVar(&f.sim.GPUMemory, "gpu-memory", "80GiB", "a device's memory, for --shard-features auto")
	fs.BoolVar(&f.sim.NoReuse, "no-feature-reuse", false, "read every row at every batch instead of keeping the rows of one batch that the next needs")
	fs.StringVar(&f.sim.Chunks, "chunks", "replay", "how the all-to-alls' chunks are sized: replay (from 16 observed batches) or eager (grown from one row)")
	fs.IntVar(&f.sim.Threads, "threads", 0, "ranks simulated at once (0 = all cores)")
	fs.BoolVar(&f.json, "json", false, "print the simulation and the predictions as JSON")
	fs.BoolVar(&f.perRank, "per-rank", false, "print every rank of every step")
	fs.BoolVar(&f.sim.Predict, "predict", true, "simulate 1, 2, 4, 8, 2x8, 4x8 and 8x8 devices as well and predict each epoch")
	fs.Float64Var(&f.sim.StepMs, "step-ms", 0, "one GPU's step time at the per-device batch in ms (default: an H100's on products-sim: 0.230, 0.309, 0.436, 0.618 ms at 256, 512, 1024, 2048 seeds, interpolated; for a typed graph, an H200's on igbh-sim at 1024 seeds, 3 layers, hidden 512, fanouts 15,10,5, 4 heads: rgat 38.42 ms, rsage 26.61 ms, scaled by each job's sampled edges; rgcn needs it)")
	fs.StringVar(&f.sim.StepTimes, "step-times", "", "one GPU's step times by batch instead of the H100's, as seeds:ms pairs (256:0.230,512:0.309,1024:0.436,2048:0.618); --step-ms then scales them")
	fs.Float64Var(&f.sim.Links.NVLinkGBs, "nvlink-gbs", l.NVLinkGBs, "NVLink bandwidth per GPU per direction, GB/s")
	fs.Float64Var(&f.sim.Links.PCIeGBs, "pcie-gbs", l.PCIeGBs, "PCIe bandwidth per GPU, GB/s (with --intra pcie)")
	fs.Float64Var(&f.sim.NetGbps, "net-gbps", 8*l.NetGBs, "network bandwidth per GPU between hosts, Gb/s")
	fs.StringVar(&f.sim.Intra, "intra", "nvlink", "link between the GPUs of a host: nvlink or pcie")
	fs.Float64Var(&f.sim.Links.CollectiveUs, "collective-us", l.CollectiveUs, "fixed cost of one collective within a host, µs")
	fs.Float64Var(&f.sim.Links.NetCollectiveUs, "net-collective-us", l.NetCollectiveUs, "fixed cost of one collective across hosts, µs")
	fs.IntVar(&f.sim.Links.Collectives, "collectives", l.Collectives, "collectives a step issues besides the features' all-to-alls (the overflow flag, the gradients)")
	fs.Float64Var(&f.sim.Links.Overlap, "overlap", l.Overlap, "share of the step's compute that the next step's all-to-all fetch hides behind")
	fs.Int64Var(&f.sim.ParamBytes, "param-bytes", 0, "bytes of gradients all-reduced per step (default: the model's float32 parameters: GraphSAGE's, or a typed graph's --model)")
	fs.IntVar(&f.sim.Hidden, "hidden", 0, "hidden width, for the parameters (default: the preset's)")
	fs.StringVar(&f.sim.Model, "model", "", "a typed graph's model: rsage, rgcn or rgat (default: the preset's, else rsage)")
	fs.IntVar(&f.sim.Heads, "heads", 0, "a typed graph's attention heads, for rgat's parameters (default: the preset's)")
	fs.Float64Var(&f.sim.Scale, "scale", 0, "a typed preset's share of its counts in (0, 1], as fanout gen's (default: the preset's own)")
}

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f simFlags
	fs := newFlags("simulate", stderr)
	f.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	f.sim.Log, f.sim.Progress = stderr, bars(stderr)
	r, err := job.RunSimulation(f.sim)
	if err != nil {
		return err
	}
	if r.Typed != nil {
		return printTypedSimulation(stdout, r, f.json, f.perRank)
	}
	if f.json {
		return writeJSON(stdout, struct {
			Simulation  *simulate.Result      `json:"simulation"`
			Model       *simulate.Model       `json:"model"`
			Job         simulate.Prediction   `json:"job"`
			Predictions []simulate.Prediction `json:"predictions,omitempty"`
		}{r.Result, r.Model, r.Job, r.Predictions})
	}
	simulate.PrintSteps(stdout, r.Result, f.perRank)
	simulate.PrintPredictions(stdout, r.Result, r.Model, r.Job, r.Predictions, r.Global)
	return nil
}

// check refuses, before any data is read, sizes past the limits of a
// simulation (simulate.CheckSize, for the ladder's sizes too with
// --predict) and values that would give a table that is not finite or
// means nothing: negative counts, a --scale outside [0, 1], a step time below 0 or not finite,
// links that simulate.Links.Check refuses, a --gpu-memory that is not a
// size above 0, a --replicate fraction outside [0, 1].
func (f *simFlags) check() error {
	s := &f.sim
	if err := simulate.CheckSize(s.Hosts, s.Devices, s.Steps); err != nil {
		return err
	}
	if s.Predict {
		for _, sc := range simulate.Ladder() {
			if err := simulate.CheckSize(sc.Hosts, sc.Devices, s.Steps); err != nil {
				return fmt.Errorf("predict: the ladder's %s devices: %w", sc, err)
			}
		}
	}
	for _, c := range []struct {
		flag string
		v    int64
	}{{"batch", int64(s.Batch)}, {"global-batch", int64(s.GlobalBatch)}, {"param-bytes", s.ParamBytes}, {"hidden", int64(s.Hidden)}, {"heads", int64(s.Heads)}} {
		if c.v < 0 {
			return fmt.Errorf("%s: %d, want 0 (the default) or more", c.flag, c.v)
		}
	}
	if !(s.Scale >= 0 && s.Scale <= 1) {
		return fmt.Errorf("scale: %v, want a share of the preset's counts in (0, 1] (0: the preset's own)", s.Scale)
	}
	if math.IsNaN(s.StepMs) || math.IsInf(s.StepMs, 0) || s.StepMs < 0 {
		return fmt.Errorf("step-ms: %v, want 0 (the H100's table) or a finite time above 0", s.StepMs)
	}
	l := s.Links
	l.NetGBs = s.NetGbps / 8
	if err := l.Check(); err != nil {
		return err
	}
	if mem, err := job.ParseSize(s.GPUMemory); err != nil || mem <= 0 {
		return fmt.Errorf("gpu-memory: %s is not a size (want, e.g., 80GiB)", quote.Quote(s.GPUMemory))
	}
	return checkFraction("replicate", s.Replicate)
}

// checkFraction refuses a value of --flag that is a plain number outside
// [0, 1], in the words of train's --replicate: a plain number is a
// fraction, a size has a unit (512MiB).
func checkFraction(flag, v string) error {
	if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && !(x >= 0 && x <= 1) {
		return fmt.Errorf("%s: %s is not auto, all, a fraction in [0, 1] or a size (e.g. 512MiB)", flag, quote.Quote(v))
	}
	return nil
}

// printTypedSimulation prints a typed graph's simulation, its memory and
// its predictions, as text or JSON.
func printTypedSimulation(w io.Writer, r *job.SimulationResult, asJSON, perRank bool) error {
	if asJSON {
		return writeJSON(w, struct {
			Simulation  *simulate.TypedResult `json:"simulation"`
			Model       *simulate.TypedModel  `json:"model"`
			Memory      simulate.Memory       `json:"memory"`
			Job         simulate.Prediction   `json:"job"`
			Predictions []simulate.Prediction `json:"predictions,omitempty"`
		}{r.Typed, r.TypedModel, r.Memory, r.Job, r.Predictions})
	}
	simulate.PrintTypedSteps(w, r.Typed, r.Memory, perRank)
	simulate.PrintTypedPredictions(w, r.Typed, r.TypedModel, r.Job, r.Predictions, r.Global)
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(v)
}
