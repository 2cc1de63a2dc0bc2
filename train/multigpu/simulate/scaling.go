package simulate

import "fmt"

// Scale is a job's size: hosts of devices.
type Scale struct {
	Hosts   int `json:"hosts"`
	Devices int `json:"devices_per_host"`
}

func (s Scale) String() string {
	if s.Hosts == 1 {
		return fmt.Sprint(s.Devices)
	}
	return fmt.Sprintf("%dx%d", s.Hosts, s.Devices)
}

// Ladder is the sizes the model predicts: 1, 2, 4 and 8 devices of one
// host, then 2, 4 and 8 hosts of 8.
func Ladder() []Scale {
	return []Scale{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {4, 8}, {8, 8}}
}

// Scaling simulates base at every scale (base.Batch/base.Ranks() seeds
// per device, or, with global, base.Batch seeds over all ranks; a scale
// the global batch does not split over is left out) and predicts each
// epoch and its speed-up over one GPU at the same per-device batch (with
// global: one GPU at the global batch). Every scale is checked against
// the limits of a simulation before any is simulated. done, when set,
// sees each simulation.
func (r *Runner) Scaling(base Config, global bool, m *Model, scales []Scale, done func(Scale, *Result)) ([]Prediction, error) {
	if err := base.check(); err != nil {
		return nil, err
	}
	perDevice := base.Batch / base.Ranks()
	one := perDevice
	if global {
		one = base.Batch
	}
	ref, err := m.OneGPU(len(r.ds.Train), one)
	if err != nil {
		return nil, err
	}
	var jobs []scaled
	for _, s := range scales {
		cfg := base
		cfg.Hosts, cfg.Devices, cfg.TopoRanks = s.Hosts, s.Devices, 0
		n := s.Hosts * s.Devices
		cfg.Batch = perDevice * n
		if global {
			if base.Batch%n != 0 {
				continue
			}
			cfg.Batch = base.Batch
		}
		if n > 1 {
			if err := r.check(&cfg); err != nil {
				return nil, fmt.Errorf("%s devices: %w", s, err)
			}
		}
		jobs = append(jobs, scaled{s, cfg})
	}
	var out []Prediction
	for _, j := range jobs {
		p, err := r.predict(j, m, done)
		if err != nil {
			return nil, err
		}
		p.Speedup = ref.EpochS / p.EpochS
		out = append(out, p)
	}
	return out, nil
}

// scaled is one scale of Scaling and its job.
type scaled struct {
	scale Scale
	cfg   Config
}

// predict simulates j (one GPU alone needs no simulation) and predicts
// its epoch.
func (r *Runner) predict(j scaled, m *Model, done func(Scale, *Result)) (Prediction, error) {
	if j.cfg.Ranks() == 1 {
		return m.OneGPU(len(r.ds.Train), j.cfg.Batch)
	}
	res, err := r.Run(j.cfg)
	if err != nil {
		return Prediction{}, fmt.Errorf("%s devices: %w", j.scale, err)
	}
	if done != nil {
		done(j.scale, res)
	}
	return m.Predict(FiguresOf(res))
}

// Job predicts the epoch of the simulated job res, with its speed-up over
// one GPU at the same per-device batch (with global: at the global batch).
func (m *Model) Job(res *Result, global bool) (Prediction, error) {
	c := res.Config
	one := c.Batch / c.Ranks()
	if global {
		one = c.Batch
	}
	ref, err := m.OneGPU(res.TrainSeeds, one)
	if err != nil {
		return Prediction{}, err
	}
	p, err := m.Predict(FiguresOf(res))
	if err == nil {
		p.Speedup = ref.EpochS / p.EpochS
	}
	return p, err
}
