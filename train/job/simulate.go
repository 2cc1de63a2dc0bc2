package job

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu/simulate"
)

// Simulation is a simulate job: the sampling and placement of a
// data-parallel job of Hosts hosts of Devices devices, run on the CPU
// through the training code paths (package simulate), and a model of its
// epoch at this size and, with Predict, at the sizes of simulate.Ladder.
type Simulation struct {
	Source                      Source
	Hosts, Devices, Steps       int
	Batch, GlobalBatch, Threads int    // Batch per device, or GlobalBatch over all
	Fanouts                     string // "" for the preset's
	Replicate, ShardFeatures    string
	Chunks, GPUMemory           string
	NoReuse, Predict            bool
	Seed                        uint64
	StepMs                      float64 // one GPU's step time at the per-device batch (0: the H100 table's)
	StepTimes                   string  // a table of seeds:ms pairs instead of the H100's
	Links                       simulate.Links
	NetGbps                     float64
	Intra                       string // nvlink or pcie
	ParamBytes                  int64  // 0: the model's (GraphSAGE's for one type)
	Hidden                      int    // 0: the preset's
	// Model is a typed graph's model (rsage, rgcn, rgat; "": the
	// preset's, else rsage) and Heads its attention heads (0: the
	// preset's); Scale is a typed preset's share of its counts (0: the
	// preset's own).
	Model    string
	Heads    int
	Scale    float64
	Log      io.Writer
	Progress func(title string) (update func(stage string, done, total int64), done func())
}

// SimulationResult is what a simulation found and predicts.
type SimulationResult struct {
	Result      *simulate.Result
	Model       *simulate.Model
	Job         simulate.Prediction   // this job's epoch
	Predictions []simulate.Prediction // the ladder's, with Predict
	Global      bool                  // the batch is global (kept over the ladder)
	// Typed, TypedModel and Memory are a typed graph's simulation (then
	// Result and Model are nil), its model and a device's memory.
	Typed      *simulate.TypedResult
	TypedModel *simulate.TypedModel
	Memory     simulate.Memory
}

// RunSimulation simulates the job and predicts its epoch, saying on Log
// how long the simulations took.
func RunSimulation(s Simulation) (*SimulationResult, error) {
	if err := CheckThreads(s.Threads); err != nil {
		return nil, err
	}
	ds, base, err := s.dataset()
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	if ds.Typed() {
		return s.runTyped(ds, base)
	}
	if s.Model != "" || s.Heads != 0 {
		return nil, fmt.Errorf("model: %s has one vertex type, whose simulated model is GraphSAGE's (--param-bytes sets its gradients); --model and --heads are typed graphs'", ds.Name)
	}
	cfg, global, err := s.config(ds, base)
	if err != nil {
		return nil, err
	}
	model, err := s.model(ds, base, cfg)
	if err != nil {
		return nil, err
	}
	r := simulate.NewRunner(ds)
	start := time.Now()
	res, err := r.Run(cfg)
	if err != nil {
		return nil, err
	}
	s.saySteps(start, len(res.Steps), cfg.Ranks())
	job, err := model.Job(res, global)
	if err != nil {
		return nil, err
	}
	out := &SimulationResult{Result: res, Model: model, Job: job, Global: global}
	if s.Predict {
		out.Predictions, err = r.Scaling(cfg, global, model, simulate.Ladder(), func(sc simulate.Scale, _ *simulate.Result) { s.sayScale(start, sc) })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// saySteps says on Log that steps of ranks were simulated since start.
func (s *Simulation) saySteps(start time.Time, steps, ranks int) {
	fmt.Fprintf(s.Log, "simulated %d steps of %d ranks in %s\n", steps, ranks, time.Since(start).Round(time.Millisecond))
}

// sayScale says on Log that the ladder's scale sc was simulated, and the
// time since start.
func (s *Simulation) sayScale(start time.Time, sc simulate.Scale) {
	fmt.Fprintf(s.Log, "simulated %s devices (%s)\n", sc, time.Since(start).Round(time.Millisecond))
}

// dataset opens --data or generates --preset, and the training
// configuration it implies (the preset's model and sampling).
func (s *Simulation) dataset() (*dataset.Dataset, train.Config, error) {
	base := train.Defaults()
	name := s.Source.Preset
	if s.Source.Data != "" {
		name = ""
		if m, err := dataset.ReadManifest(filepath.Join(s.Source.Data, dataset.ManifestFile)); err == nil && (strings.HasPrefix(m.Source, "rmat") || strings.Contains(m.Source, "preset "+m.Name+",")) {
			name = m.Name
		}
	}
	if p, err := rmat.Lookup(name); err == nil {
		base = PresetConfig(p)
	}
	if s.Scale == 0 {
		ds, err := LoadDataset(s.Source, s.Threads, s.Log, s.Progress)
		return ds, base, err
	}
	if s.Source.Data != "" {
		return nil, base, fmt.Errorf("scale: %g is a typed preset's share of its counts, and --data is read as it is", s.Scale)
	}
	p, err := rmat.LookupVariant(s.Source.Preset, rmat.Variant{Scale: s.Scale})
	if err != nil {
		return nil, base, fmt.Errorf("scale: %w", err)
	}
	update, done := func(string, int64, int64) {}, func() {}
	if s.Progress != nil {
		update, done = s.Progress("generating " + p.Name)
	}
	defer done()
	ds, err := rmat.Generate(p, rmat.Options{Seed: max(s.Source.Seed, 1), Threads: s.Threads, Progress: update})
	return ds, PresetConfig(p), err
}

// config is the simulated job, and whether its batch is global.
func (s *Simulation) config(ds *dataset.Dataset, base train.Config) (simulate.Config, bool, error) {
	c := simulate.Config{Hosts: s.Hosts, Devices: s.Devices, Seed: s.Seed, Steps: s.Steps, Reuse: !s.NoReuse,
		Chunks: simulate.Chunks(s.Chunks), Threads: s.Threads, Fanouts: base.Fanouts}
	if c.Chunks != simulate.ReplayChunks && c.Chunks != simulate.EagerChunks {
		return c, false, fmt.Errorf("chunks: %q, want replay or eager", s.Chunks)
	}
	var err error
	if c.Fanouts, err = s.fanouts(base); err != nil {
		return c, false, err
	}
	var global bool
	if c.Batch, global, err = s.batch(base); err != nil {
		return c, false, err
	}
	listBytes := 4 * ds.Graph.NumEdges()
	if c.Replicate, err = ReplicateBytes(s.Replicate, listBytes); err != nil {
		return c, false, err
	}
	shard := s.ShardFeatures
	if shard == "auto" {
		mem, err := ParseSize(s.GPUMemory)
		if err != nil {
			return c, false, fmt.Errorf("gpu-memory: %w", err)
		}
		shard = "off"
		if ShardsFeatures(ds, mem) {
			shard = "on"
		}
	}
	c.Features, err = simulate.ParseFeatures(shard)
	return c, global, err
}

// fanouts are --fanouts, or base's.
func (s *Simulation) fanouts(base train.Config) ([]int, error) {
	if s.Fanouts == "" {
		return base.Fanouts, nil
	}
	f, err := ParseFanouts(s.Fanouts)
	if err != nil {
		return nil, fmt.Errorf("fanouts: %w", err)
	}
	return f, nil
}

// batch is the job's global batch (--batch per device, --global-batch,
// or base's per device) and whether it is global.
func (s *Simulation) batch(base train.Config) (int, bool, error) {
	n := s.Hosts * s.Devices
	if n < 1 {
		return 0, false, fmt.Errorf("hosts, devices: %d x %d", s.Hosts, s.Devices)
	}
	global := s.GlobalBatch > 0
	switch {
	case global && s.Batch > 0:
		return 0, false, errors.New("batch: give --batch (per device) or --global-batch, not both")
	case global && s.GlobalBatch%n != 0:
		return 0, false, fmt.Errorf("global-batch: %d seeds do not split evenly over %d devices", s.GlobalBatch, n)
	case global:
		return s.GlobalBatch, true, nil
	case s.Batch > 0:
		return s.Batch * n, false, nil
	}
	return base.Batch * n, false, nil
}

// model is the epoch's model for the flags.
func (s *Simulation) model(ds *dataset.Dataset, base train.Config, c simulate.Config) (*simulate.Model, error) {
	m := &simulate.Model{Step: simulate.H100ProductsSim(), Links: s.Links, ParamBytes: s.ParamBytes}
	m.Links.NetGBs = s.NetGbps / 8
	switch s.Intra {
	case "nvlink":
	case "pcie":
		m.Links.IntraPCIe = true
	default:
		return nil, fmt.Errorf("intra: %q, want nvlink or pcie", s.Intra)
	}
	if s.StepTimes != "" {
		t, err := parseStepTimes(s.StepTimes)
		if err != nil {
			return nil, err
		}
		m.Step = t
	}
	if s.StepMs > 0 {
		m.Step = m.Step.Scaled(c.Batch/c.Ranks(), s.StepMs)
	}
	if m.ParamBytes == 0 {
		hidden := base.Hidden
		if s.Hidden > 0 {
			hidden = s.Hidden
		}
		m.ParamBytes = simulate.ParamBytes(ds.FeatDim, hidden, ds.NumClasses, len(c.Fanouts))
	}
	return m, nil
}

// parseStepTimes reads --step-times: seeds:ms pairs, comma-separated.
func parseStepTimes(s string) (simulate.StepTimes, error) {
	var t simulate.StepTimes
	for _, p := range strings.Split(s, ",") {
		b, ms, ok := strings.Cut(strings.TrimSpace(p), ":")
		n, err1 := strconv.Atoi(b)
		v, err2 := strconv.ParseFloat(ms, 64)
		if !ok || err1 != nil || err2 != nil || n < 1 || v <= 0 {
			return t, fmt.Errorf("step-times: %q is not seeds:ms pairs like 512:0.309,1024:0.436", s)
		}
		t.Batch, t.Ms = append(t.Batch, n), append(t.Ms, v)
	}
	return t, t.Check()
}
