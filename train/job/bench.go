package job

import (
	"context"
	"fmt"
	"github.com/fanout-gnn/fanout/train"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// Bench is a benchmark job: the job's data, device and configuration,
// measured by mode on one device, or trained data-parallel on each count
// of Counts.
type Bench struct {
	Job
	Modes         []train.Mode // the drivers to measure, in order (train.Auto: the device's)
	Steps, Warmup int
	// DeviceCounts, when set, trains on these device counts instead
	// ("2", "1,2,4" or "all").
	DeviceCounts string
	Profile      bool // add an eager pass with each op timed
	// What was measured, as soon as it is: each mode's report, each
	// device count's, and the profile.
	OnMode    func(BenchReport) error
	OnDevices func(DevicesReport) error
	OnProfile func(ProfileReport) error
}

// ParseBenchModes reads bench's --mode: eager, replay, both, a list of
// eager and replay, or auto.
func ParseBenchModes(s string) ([]train.Mode, error) {
	switch s {
	case "auto":
		return []train.Mode{train.Auto}, nil
	case "both":
		return []train.Mode{train.Eager, train.Replay}, nil
	}
	var modes []train.Mode
	for _, m := range strings.Split(s, ",") {
		switch m {
		case "eager":
			modes = append(modes, train.Eager)
		case "replay":
			modes = append(modes, train.Replay)
		default:
			return nil, fmt.Errorf("--mode %s: want eager, replay or both", quote.Quote(s))
		}
	}
	return modes, nil
}

// RunBench loads the data (timed: the generation is reported, not part of
// the epoch) and measures each mode on one device, or each device count.
func RunBench(ctx context.Context, b Bench) error {
	j := &b.Job
	start := time.Now()
	ds, err := j.load()
	if err != nil {
		return err
	}
	defer ds.Close()
	gen := time.Since(start).Seconds()
	if b.DeviceCounts != "" {
		counts, err := ParseDeviceCounts(b.DeviceCounts, j.allDevices)
		if err != nil {
			return err
		}
		if len(b.Modes) > 1 {
			return fmt.Errorf("mode: both measures one device; with --devices choose eager, replay or auto")
		}
		j.Mode = b.Modes[0]
		return b.devices(ctx, counts, ds)
	}
	cfg := j.Config
	j.fitBatch(&cfg, ds, 1, j.Log)
	be, desc, err := OpenBackend(j.Device, j.Threads, j.CUDA, j.Log)
	if err != nil {
		return err
	}
	defer CloseBackend(be)
	var eagerStep float64
	for _, m := range b.Modes {
		m = resolve(m, be)
		rep := BenchReport{Preset: ds.Name, Mode: m.String(), GenSeconds: gen, Device: desc, TF32: j.CUDA.TF32, TF32x3: j.CUDA.Options().TF32x3, FeatureDType: j.FeatureDType,
			BottomProducts: cfg.BottomProducts, Date: time.Now().UTC().Format(time.DateOnly)}
		mb := be
		if m == train.Replay {
			mb = WithCapture(be)
		}
		fmt.Fprintf(j.Log, "measuring %d %s steps (after %d warm-up) of %s on %s\n", b.Steps, m, b.Warmup, ds.Name, desc)
		if err := benchMode(mb, ds, cfg, m, &rep, b.Steps, b.Warmup, j.Replay); err != nil {
			return err
		}
		if m == train.Eager {
			eagerStep = rep.StepSeconds
		} else if eagerStep > 0 {
			rep.SpeedupOverEager = eagerStep / rep.StepSeconds
		}
		if err := b.OnMode(rep); err != nil {
			return err
		}
	}
	if !b.Profile {
		return nil
	}
	rep := BenchReport{Preset: ds.Name, Device: desc, TF32: j.CUDA.TF32, TF32x3: j.CUDA.Options().TF32x3, Date: time.Now().UTC().Format(time.DateOnly)}
	pr, err := benchProfile(be, ds, cfg, rep, b.Steps, b.Warmup, j.Log)
	if err != nil {
		return err
	}
	return b.OnProfile(*pr)
}
