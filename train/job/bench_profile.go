package job

import (
	"fmt"
	"io"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/profile"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// ProfileReport is what bench --profile measured (its --json line).
type ProfileReport struct {
	Preset  string      `json:"preset"`
	Device  string      `json:"device"`
	Mode    string      `json:"mode"` // "profile"
	Steps   int         `json:"steps"`
	StepS   float64     `json:"step_s"`   // wall time per step of the profiled pass
	DeviceS float64     `json:"device_s"` // summed op device time per step
	Ops     []ProfileOp `json:"ops"`      // every op, the largest time first
	Timed   bool        `json:"timed"`    // false: the backend has no timer (calls only)
	Date    string      `json:"date"`
	TF32    bool        `json:"tf32,omitempty"`
	Note    string      `json:"note,omitempty"`
}

// ProfileOp is one op's share of the profiled step.
type ProfileOp struct {
	Name         string  `json:"name"`
	CallsPerStep float64 `json:"calls_per_step"`
	USPerStep    float64 `json:"us_per_step"`
	Share        float64 `json:"share"` // of the summed op device time
}

// benchProfile runs an extra eager pass with every op timed by device
// marks (package profile) and reports every op, the largest time first.
func benchProfile(be backend.Backend, ds *dataset.Dataset, cfg train.Config, rep BenchReport, steps, warmup int, log io.Writer) (*ProfileReport, error) {
	task, err := NewTask(cfg)
	if err != nil {
		return nil, err
	}
	p := profile.New(be)
	if !p.Timed() {
		fmt.Fprintf(log, "profile: %s has no device timer; counting calls only\n", be.Name())
	}
	fmt.Fprintf(log, "profiling %d eager steps (after %d warm-up) of %s\n", steps, warmup, ds.Name)
	tr, err := train.New(p, ds, cfg, train.Options{Device: rep.Device, Task: task})
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	// Bench's synced pass warms up; the totals cover its unsynced pass.
	res, err := tr.Bench(steps, warmup, train.BenchHooks{Before: p.Reset})
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	ops := p.Report()
	if err := p.Err(); err != nil {
		return nil, err
	}
	pr := ProfileReport{Preset: rep.Preset, Device: rep.Device, Mode: "profile", Steps: res.Steps, StepS: res.StepSeconds,
		Timed: p.Timed(), Date: rep.Date, TF32: rep.TF32,
		Note: "eager: an op's time runs from the mark before it to the mark after it, so it includes host time whenever the device waited for the host (each eager Linear op reads its live count back)"}
	var total time.Duration
	for _, o := range ops {
		total += o.Time
	}
	n := float64(max(res.Steps, 1))
	pr.DeviceS = total.Seconds() / n
	for _, o := range ops {
		op := ProfileOp{Name: o.Name, CallsPerStep: float64(o.Calls) / n, USPerStep: o.Time.Seconds() * 1e6 / n}
		if total > 0 {
			op.Share = float64(o.Time) / float64(total)
		}
		pr.Ops = append(pr.Ops, op)
	}
	return &pr, nil
}
