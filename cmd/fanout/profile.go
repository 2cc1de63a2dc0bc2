package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/profile"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// profileTop is how many ops the table shows.
const profileTop = 15

// profileReport is bench --profile's machine-readable line (--json).
type profileReport struct {
	Preset  string      `json:"preset"`
	Device  string      `json:"device"`
	Mode    string      `json:"mode"` // "profile"
	Steps   int         `json:"steps"`
	StepS   float64     `json:"step_s"`   // wall time per step of the profiled pass
	DeviceS float64     `json:"device_s"` // summed op device time per step
	Ops     []profileOp `json:"ops"`      // every op, the largest time first
	Timed   bool        `json:"timed"`    // false: the backend has no timer (calls only)
	Date    string      `json:"date"`
	TF32    bool        `json:"tf32,omitempty"`
	Note    string      `json:"note,omitempty"`
}

type profileOp struct {
	Name         string  `json:"name"`
	CallsPerStep float64 `json:"calls_per_step"`
	USPerStep    float64 `json:"us_per_step"`
	Share        float64 `json:"share"` // of the summed op device time
}

// benchProfile runs an extra eager pass with every op timed by device
// marks (package profile) and prints the ops that took the most time.
func benchProfile(be backend.Backend, ds *dataset.Dataset, cfg train.Config, rep benchReport, steps, warmup int, asJSON bool, stdout, stderr io.Writer) error {
	p := profile.New(be)
	if !p.Timed() {
		fmt.Fprintf(stderr, "profile: %s has no device timer; counting calls only\n", be.Name())
	}
	fmt.Fprintf(stderr, "profiling %d eager steps (after %d warm-up) of %s\n", steps, warmup, ds.Name)
	tr, err := train.New(p, ds, cfg, train.Options{Device: rep.Device})
	if err != nil {
		return err
	}
	defer tr.Close()
	// Bench's synced pass warms up; the totals cover its unsynced pass.
	res, err := tr.Bench(steps, warmup, train.BenchHooks{Before: p.Reset})
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	ops := p.Report()
	if err := p.Err(); err != nil {
		return err
	}
	pr := profileReport{Preset: rep.Preset, Device: rep.Device, Mode: "profile", Steps: res.Steps, StepS: res.StepSeconds,
		Timed: p.Timed(), Date: rep.Date, TF32: rep.TF32,
		Note: "eager: an op's time runs from the mark before it to the mark after it, so it includes host time whenever the device waited for the host (each eager Linear op reads its live count back)"}
	var total time.Duration
	for _, o := range ops {
		total += o.Time
	}
	n := float64(max(res.Steps, 1))
	pr.DeviceS = total.Seconds() / n
	for _, o := range ops {
		op := profileOp{Name: o.Name, CallsPerStep: float64(o.Calls) / n, USPerStep: o.Time.Seconds() * 1e6 / n}
		if total > 0 {
			op.Share = float64(o.Time) / float64(total)
		}
		pr.Ops = append(pr.Ops, op)
	}
	if asJSON {
		b, _ := json.Marshal(pr)
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printProfile(stdout, pr)
	return nil
}

func printProfile(w io.Writer, pr profileReport) {
	fmt.Fprintf(w, "preset %s on %s, eager profile (%s), %d steps\n", pr.Preset, pr.Device, pr.Date, pr.Steps)
	fmt.Fprintf(w, "  device time of ops %.1f µs per step; wall %.1f µs per step (marks add host work)\n", pr.DeviceS*1e6, pr.StepS*1e6)
	fmt.Fprintf(w, "  %-24s %10s %10s %7s\n", "op", "calls/step", "µs/step", "share")
	for i, o := range pr.Ops {
		if i == profileTop {
			fmt.Fprintf(w, "  (%d more ops)\n", len(pr.Ops)-profileTop)
			break
		}
		fmt.Fprintf(w, "  %-24s %10.1f %10.1f %6.1f%%\n", o.Name, o.CallsPerStep, o.USPerStep, 100*o.Share)
	}
	fmt.Fprintf(w, "  (%s)\n", pr.Note)
}
