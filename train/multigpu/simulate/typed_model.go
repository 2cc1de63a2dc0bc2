package simulate

import (
	"fmt"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
)

// TypedModel predicts a typed job's epoch. A typed step reads every list
// and row locally, so its parts are the compute, the wait for the slowest
// rank and the all-reduce of the gradients (Model's, with no peer reads
// or all-to-alls). The compute of a step is one GPU's step time StepMs,
// measured at RefBatch seeds, scaled by the rank's sampled work: the mean
// sampled edges of the job's ranks over RefEdges, those of one GPU's step
// of RefBatch seeds (simulated); the whole step is taken to grow with its
// sampled edges (no fixed part).
type TypedModel struct {
	StepMs     float64 `json:"step_ms"`
	RefBatch   int     `json:"ref_batch"`
	RefEdges   float64 `json:"ref_edges"`
	Links      Links   `json:"links"`
	ParamBytes int64   `json:"param_bytes"` // the gradients all-reduced every step
}

// TypedFigures are a typed simulation's per-step averages over its full
// steps (every rank with its whole share of seeds).
type TypedFigures struct {
	Hosts, Devices int
	PerDevice      int     // seeds per rank per step
	TrainSeeds     int     // seeds of an epoch
	Edges          float64 // a rank's sampled edges per step, the mean over ranks
	Imbalance      float64 // the slowest rank's sampled edges over the mean
}

// TypedFiguresOf averages res's full steps. Where none is full (an
// epoch shorter than one global batch) a rank's edges are the sampled
// edges per seed over every step times its share, and its imbalance 1.
func TypedFiguresOf(res *TypedResult) TypedFigures {
	c := res.Config
	n := c.Ranks()
	f := TypedFigures{Hosts: c.Hosts, Devices: c.Devices, PerDevice: c.Batch / n, TrainSeeds: res.TrainSeeds, Imbalance: 1}
	var edges, imb float64
	var allEdges, allSeeds int64
	full := 0
	for _, st := range res.Steps {
		var sum int64
		whole := true
		for _, rs := range st.Ranks {
			sum += rs.Edges
			allSeeds += int64(rs.Seeds)
			whole = whole && rs.Seeds == f.PerDevice
		}
		allEdges += sum
		if !whole || sum == 0 {
			continue
		}
		full++
		edges += float64(sum) / float64(n)
		imb += st.Imbalance
	}
	switch {
	case full > 0:
		f.Edges, f.Imbalance = edges/float64(full), imb/float64(full)
	case allSeeds > 0:
		f.Edges = float64(allEdges) / float64(allSeeds) * float64(f.PerDevice)
	}
	return f
}

// Check refuses a model that would predict a step that is not finite.
func (m *TypedModel) Check() error {
	switch {
	case !(m.StepMs > 0 && m.StepMs < 1e12):
		return fmt.Errorf("step-ms: %v, want a finite time above 0", m.StepMs)
	case m.RefBatch < 1:
		return fmt.Errorf("simulate: a reference batch of %d seeds", m.RefBatch)
	}
	return m.Links.Check()
}

// Compute is one GPU's step time (ms) for a step that samples edges.
func (m *TypedModel) Compute(edges float64) float64 {
	if m.RefEdges <= 0 {
		return m.StepMs // no sampled work to scale by
	}
	return m.StepMs * edges / m.RefEdges
}

// model is the one-type Model of a job whose ranks' steps take compute ms
// at perDevice seeds: a step time proportional to its seeds.
func (m *TypedModel) model(perDevice int, compute float64) *Model {
	compute = max(compute, 1e-9)
	step := StepTimes{Batch: []int{perDevice, 2 * perDevice}, Ms: []float64{compute, 2 * compute}}
	return &Model{Step: step, Links: m.Links, ParamBytes: m.ParamBytes}
}

// Predict is the epoch of the job f describes.
func (m *TypedModel) Predict(f TypedFigures) (Prediction, error) {
	if err := m.Check(); err != nil {
		return Prediction{}, err
	}
	if f.PerDevice < 1 {
		return Prediction{}, fmt.Errorf("simulate: %d ranks of %d seeds", f.Hosts*f.Devices, f.PerDevice)
	}
	return m.model(f.PerDevice, m.Compute(f.Edges)).Predict(Figures{Hosts: f.Hosts, Devices: f.Devices,
		PerDevice: f.PerDevice, TrainSeeds: f.TrainSeeds, Imbalance: f.Imbalance})
}

// TypedRunner simulates typed jobs on one dataset, keeping the one-GPU
// simulations that the references of several predictions share (by
// batch: a runner serves the scales of one job, its seed, steps and
// fanouts).
type TypedRunner struct {
	ds  *dataset.Dataset
	one map[int]float64 // per batch: one GPU's mean sampled edges per step
}

// NewTypedRunner simulates typed jobs on ds.
func NewTypedRunner(ds *dataset.Dataset) *TypedRunner {
	return &TypedRunner{ds: ds, one: map[int]float64{}}
}

// Run simulates cfg.
func (r *TypedRunner) Run(cfg TypedConfig) (*TypedResult, error) { return RunTyped(r.ds, cfg) }

// OneGPU is the mean sampled edges of one GPU's step of batch seeds, over
// base's steps and seed.
func (r *TypedRunner) OneGPU(base TypedConfig, batch int) (float64, error) {
	if e, ok := r.one[batch]; ok {
		return e, nil
	}
	base.Hosts, base.Devices, base.Batch = 1, 1, batch
	res, err := RunTyped(r.ds, base)
	if err != nil {
		return 0, err
	}
	e := TypedFiguresOf(res).Edges
	r.one[batch] = e
	return e, nil
}

// Reference sets m.RefEdges from a simulation of one GPU at m.RefBatch
// seeds over base's steps and seed.
func (r *TypedRunner) Reference(base TypedConfig, m *TypedModel) error {
	e, err := r.OneGPU(base, m.RefBatch)
	m.RefEdges = e
	return err
}

// Job predicts the epoch of the simulated job res with its speed-up over
// one GPU at the same per-device batch (with global: at the global batch).
func (r *TypedRunner) Job(res *TypedResult, global bool, m *TypedModel) (Prediction, error) {
	c := res.Config
	p, err := m.Predict(TypedFiguresOf(res))
	if err != nil {
		return p, err
	}
	one := c.Batch / c.Ranks()
	if global {
		one = c.Batch
	}
	e, err := r.OneGPU(c, one)
	if err != nil {
		return p, err
	}
	ref, err := m.Predict(TypedFigures{Hosts: 1, Devices: 1, PerDevice: one, TrainSeeds: res.TrainSeeds, Edges: e, Imbalance: 1})
	if err == nil {
		p.Speedup = ref.EpochS / p.EpochS
	}
	return p, err
}

// Scaling simulates base at every scale (base.Batch/base.Ranks() seeds
// per device, or, with global, base.Batch seeds over all ranks; a scale
// the global batch does not split over is left out) and predicts each
// epoch and its speed-up, as Runner.Scaling does for one type. Every
// scale is checked against the limits of a simulation before any is
// simulated. done, when set, sees each simulation.
func (r *TypedRunner) Scaling(base TypedConfig, global bool, m *TypedModel, scales []Scale, done func(Scale, *TypedResult)) ([]Prediction, error) {
	if err := base.check(r.ds); err != nil {
		return nil, err
	}
	perDevice := base.Batch / base.Ranks()
	var jobs []TypedConfig
	for _, s := range scales {
		cfg := base
		cfg.Hosts, cfg.Devices = s.Hosts, s.Devices
		cfg.Batch = perDevice * s.Hosts * s.Devices
		if global {
			if base.Batch%(s.Hosts*s.Devices) != 0 {
				continue
			}
			cfg.Batch = base.Batch
		}
		if err := cfg.check(r.ds); err != nil {
			return nil, fmt.Errorf("%s devices: %w", s, err)
		}
		jobs = append(jobs, cfg)
	}
	var out []Prediction
	for _, cfg := range jobs {
		res, err := r.Run(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s devices: %w", Scale{cfg.Hosts, cfg.Devices}, err)
		}
		if done != nil {
			done(Scale{cfg.Hosts, cfg.Devices}, res)
		}
		p, err := r.Job(res, global, m)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// H200IGBHSim is one H200's typed step time (ms) at batch seeds, measured
// on igbh-sim (3 layers, hidden 512, fanouts 15,10,5, 4 heads; 7dd06bc,
// docs/perf.md): 38.42 ms for rgat and 26.61 ms for rsage at 1024 seeds;
// ok is false for another model, which has no measured default.
func H200IGBHSim(model string) (ms float64, batch int, ok bool) {
	switch model {
	case nn.KindRGAT:
		return 38.42, 1024, true
	case nn.KindRSAGE:
		return 26.61, 1024, true
	}
	return 0, 0, false
}
