package job

import (
	"context"
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/train/link"
)

// LinkBenchReport is one driver's measurement of the link step.
type LinkBenchReport struct {
	Mode      string  `json:"mode"`
	Device    string  `json:"device"`
	Data      string  `json:"data"`
	Batch     int     `json:"batch"`     // positive edges per step
	Negatives int     `json:"negatives"` // per positive
	Steps     int     `json:"steps"`
	StepMs    float64 `json:"step_ms"`
	// Per step, on a GPU (absent elsewhere): kernel launches, cuBLAS
	// calls and the times the host waited for the device.
	Launches  float64 `json:"launches_per_step,omitempty"`
	Gemms     float64 `json:"gemms_per_step,omitempty"`
	HostSyncs float64 `json:"host_syncs_per_step,omitempty"`
}

// RunLinkBench measures the link step of b's job with each of b's
// drivers (Auto: the device's) on one device, a fresh trainer each.
func RunLinkBench(ctx context.Context, b Bench) ([]LinkBenchReport, error) {
	if err := checkLinkJob(b.Job); err != nil {
		return nil, err
	}
	if b.DeviceCounts != "" || b.Profile {
		return nil, errors.New("task link: bench measures one device, without --profile, for now")
	}
	var out []LinkBenchReport
	for _, m := range b.Modes {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		rep, err := linkBenchMode(b, m)
		if err != nil {
			return out, err
		}
		out = append(out, rep)
	}
	return out, nil
}

func linkBenchMode(b Bench, m Mode) (LinkBenchReport, error) {
	j := b.Job
	var rep LinkBenchReport
	err := withLinkTrainer(j, m, func(tr *link.Trainer, mode Mode, desc string) error {
		rep = LinkBenchReport{Mode: mode.String(), Device: desc, Data: tr.DatasetName(), Batch: j.Config.Batch, Negatives: j.Link.Negatives, Steps: b.Steps}
		var before cuda.Stats
		measure := func(start bool) {
			c, ok := cudaOf(tr.Backend())
			if !ok {
				return
			}
			s := c.Stats()
			if start {
				before = s
				return
			}
			n := float64(b.Steps)
			rep.Launches, rep.Gemms = float64(s.Launches-before.Launches)/n, float64(s.Gemms-before.Gemms)/n
			rep.HostSyncs = float64(s.HostSyncs-before.HostSyncs) / n
		}
		d, err := tr.Bench(mode.captures(), b.Warmup, b.Steps, measure)
		rep.StepMs = d.Seconds() * 1e3 / float64(b.Steps)
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("bench %s: %w", m, err)
	}
	return rep, nil
}
