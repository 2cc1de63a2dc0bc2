package job

import (
	"fmt"
	"slices"
	"time"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu/simulate"
)

// runTyped simulates a typed graph's data-parallel job (every relation
// and feature table on every device: simulate.RunTyped) and predicts its
// epoch from one GPU's typed step.
func (s *Simulation) runTyped(ds *dataset.Dataset, base train.Config) (*SimulationResult, error) {
	if err := s.typedRefuses(ds); err != nil {
		return nil, err
	}
	cfg, err := s.typedTrainConfig(ds, base)
	if err != nil {
		return nil, err
	}
	tc := simulate.TypedConfig{Hosts: s.Hosts, Devices: s.Devices, Seed: s.Seed, Steps: s.Steps, Threads: s.Threads}
	var global bool
	if tc.Batch, global, err = s.batch(base); err != nil {
		return nil, err
	}
	if tc.Fanouts, err = cfg.TypedFanouts(ds); err != nil {
		return nil, err
	}
	m, err := s.typedModel(ds, cfg, tc)
	if err != nil {
		return nil, err
	}
	budget, err := ParseSize(s.GPUMemory)
	if err != nil {
		return nil, fmt.Errorf("gpu-memory: %w", err)
	}
	r := simulate.NewTypedRunner(ds)
	start := time.Now()
	res, err := r.Run(tc)
	if err != nil {
		return nil, err
	}
	s.saySteps(start, len(res.Steps), tc.Ranks())
	if err := r.Reference(tc, m); err != nil {
		return nil, err
	}
	out := &SimulationResult{Typed: res, TypedModel: m, Global: global,
		Memory: simulate.TypedMemory(res, m.ParamBytes, cfg.Hidden, budget)}
	if out.Job, err = r.Job(res, global, m); err != nil {
		return nil, err
	}
	if s.Predict {
		out.Predictions, err = r.Scaling(tc, global, m, simulate.Ladder(), func(sc simulate.Scale, _ *simulate.TypedResult) { s.sayScale(start, sc) })
	}
	return out, err
}

// typedRefuses names the flag of what a typed job cannot simulate: every
// device holds every relation and feature table (no placement, so no
// sharded rows, replicas, reuse or all-to-all chunks), one-type step
// times, and learned rows (a type without features) on several devices.
func (s *Simulation) typedRefuses(ds *dataset.Dataset) error {
	why := "a typed graph trains with every relation and feature table on every device"
	switch {
	case s.ShardFeatures != "" && s.ShardFeatures != "off" && s.ShardFeatures != "auto":
		return fmt.Errorf("shard-features: %s, but %s (want off or auto)", s.ShardFeatures, why)
	case s.Replicate != "" && s.Replicate != "all" && s.Replicate != DefaultReplicate:
		return fmt.Errorf("replicate: %s, but %s (want all or %s)", s.Replicate, why, DefaultReplicate)
	case s.NoReuse:
		return fmt.Errorf("no-feature-reuse: set, but %s: no row is read from a peer", why)
	case s.Chunks != "" && s.Chunks != string(simulate.ReplayChunks):
		return fmt.Errorf("chunks: %s, but %s: no row is exchanged", s.Chunks, why)
	case s.StepTimes != "":
		return fmt.Errorf("step-times: a one-type step's table; a typed step scales --step-ms by its sampled edges")
	}
	if i := slices.IndexFunc(ds.Types, func(t dataset.VertexType) bool { return t.FeatDim == 0 }); i >= 0 && (s.Hosts*s.Devices > 1 || s.Predict) {
		return fmt.Errorf("devices: %s's type %s has no features (learned rows), which train on one device: simulate --hosts 1 --devices 1 --predict=false", ds.Name, ds.Types[i].Name)
	}
	return nil
}

// typedTrainConfig is the typed model's training configuration: base's
// (the preset's) with --model (else the preset's, else rsage), --hidden,
// --heads (else the preset's for an attending model, else 1) and --fanouts, checked as training checks it.
func (s *Simulation) typedTrainConfig(ds *dataset.Dataset, base train.Config) (train.Config, error) {
	cfg := base
	switch {
	case s.Model != "":
		cfg.Model = s.Model
	case !cfg.TypedModel():
		cfg.Model = nn.KindRSAGE
	}
	if !cfg.TypedModel() {
		return cfg, fmt.Errorf("model: %s is not a typed graphs' model (want rsage, rgcn or rgat)", cfg.Model)
	}
	if s.Hidden > 0 {
		cfg.Hidden = s.Hidden
	}
	switch {
	case s.Heads > 0:
		cfg.Heads = s.Heads
	case !cfg.Attends():
		cfg.Heads = 1 // the preset's heads are its RGAT's
	}
	var err error
	if cfg.Fanouts, err = s.fanouts(base); err != nil {
		return cfg, err
	}
	cfg.Layers = len(cfg.Fanouts)
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, cfg.CheckDataset(ds)
}

// typedModel is the typed epoch's model: one GPU's step from --step-ms at
// the per-device batch, or an H200's on igbh-sim (simulate.H200IGBHSim),
// and the gradients of the model's parameters (--param-bytes overrides).
func (s *Simulation) typedModel(ds *dataset.Dataset, cfg train.Config, tc simulate.TypedConfig) (*simulate.TypedModel, error) {
	m := &simulate.TypedModel{StepMs: s.StepMs, RefBatch: tc.Batch / tc.Ranks(), Links: s.Links, ParamBytes: s.ParamBytes}
	m.Links.NetGBs = s.NetGbps / 8
	switch s.Intra {
	case "nvlink":
	case "pcie":
		m.Links.IntraPCIe = true
	default:
		return nil, fmt.Errorf("intra: %q, want nvlink or pcie", s.Intra)
	}
	if m.StepMs == 0 {
		var ok bool
		if m.StepMs, m.RefBatch, ok = simulate.H200IGBHSim(cfg.Model); !ok {
			return nil, fmt.Errorf("step-ms: required for model %s (the default step times are an H200's for rsage and rgat on igbh-sim)", cfg.Model)
		}
	}
	if m.ParamBytes == 0 {
		var err error
		if m.ParamBytes, err = TypedParamBytes(ds, cfg); err != nil {
			return nil, err
		}
	}
	return m, m.Check()
}

// TypedParamBytes are the bytes of the gradients a typed step all-reduces:
// the float32 gradient arena of the model nn builds for cfg on ds (on a
// CPU backend, then freed), its parameters' shapes as training makes
// them.
func TypedParamBytes(ds *dataset.Dataset, cfg train.Config) (int64, error) {
	inDims := make([]int, len(ds.Types))
	for t, ty := range ds.Types {
		inDims[t] = ty.FeatDim
		if ty.FeatDim == 0 {
			inDims[t] = train.EmbedDim(ds, cfg.EmbedFeatureless)
		}
	}
	be := cpu.New(1)
	defer be.Close()
	m, err := nn.NewModel(be, cfg.TypedModelConfig(ds, inDims), cfg.Seed)
	if err != nil {
		return 0, err
	}
	defer m.Free()
	g := m.Grads()
	return int64(g.Len()) * int64(g.DType().Size()), nil
}
