package hybrid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// HotTrial is one candidate hot ratio's measured training speed.
type HotTrial struct {
	Ratio float64 `json:"ratio"`
	// StepSeconds is the wall time per training step over the measured
	// super-batches, the waits for the CPU's rows included; NaN when the
	// epoch was too short to measure.
	StepSeconds float64 `json:"step_s"`
	Steps       int     `json:"steps"` // steps measured
}

// DefaultHotCandidates are the ratios ChooseHotRatio tries by default.
func DefaultHotCandidates() []float64 { return []float64{0, 0.02, 0.05, 0.1} }

// trialSegments is how many super-batches a trial times, after the first
// (which captures the step and waits for the first rows without overlap).
const trialSegments = 3

// trialDone stops a trial run once it has measured enough.
type trialDone struct{}

func (trialDone) Error() string { return "hybrid: the trial has measured enough" }

// trial times the super-batch boundaries of epoch 0 (the replay driver's
// BeforeRun, entered once the device has finished the steps before).
type trial struct {
	marks []time.Time
	steps []int
}

func (t *trial) mark(epoch, step int) error {
	if epoch > 0 || len(t.marks) == trialSegments+2 {
		return trialDone{}
	}
	if n := len(t.steps); n > 0 && t.steps[n-1] == step {
		return nil // an overflowed step re-run
	}
	t.marks, t.steps = append(t.marks, time.Now()), append(t.steps, step)
	if len(t.marks) == trialSegments+2 {
		return trialDone{}
	}
	return nil
}

// result is the time per step from the second boundary on.
func (t *trial) result(ratio float64) HotTrial {
	r := HotTrial{Ratio: ratio, StepSeconds: math.NaN()}
	if len(t.marks) < 3 {
		return r
	}
	last := len(t.marks) - 1
	r.Steps = t.steps[last] - t.steps[1]
	r.StepSeconds = t.marks[last].Sub(t.marks[1]).Seconds() / float64(r.Steps)
	return r
}

// ChooseHotRatio trains a few super-batches at each candidate hot ratio
// (on a trainer it then discards: nothing is written, the run starts
// afresh), sets opt.Hot.Ratio to the ratio with the least time per step,
// waits for the CPU's rows included, and returns every trial. Candidates
// are tried in the given order (0 first, by default); once one is more than
// 10% slower than the best so far, larger ones are not tried. When no trial
// could be timed (an epoch of too few super-batches), the ratio is 0. The
// rankings are made once: the trials share them, and so does a run with
// opt afterwards.
func ChooseHotRatio(ctx context.Context, be backend.Backend, ds *dataset.Dataset, cfg train.Config, opt *Options, candidates []float64) ([]HotTrial, error) {
	if len(candidates) == 0 {
		candidates = DefaultHotCandidates()
	}
	if opt.ranks == nil {
		opt.ranks = &rankings{}
	}
	// A trial times training steps alone: validations within epochs would
	// end launch runs, and so place marks, between super-batches, and
	// their time would count as the steps'.
	cfg.EvalEverySteps, cfg.EvalEveryEpochs, cfg.TargetAcc = 0, 0, 0
	best, bestRatio := math.Inf(1), 0.0
	var trials []HotTrial
	for _, c := range candidates {
		o := *opt
		o.Hot.Ratio, o.Log, o.trial = c, nil, &trial{}
		_, _, err := Run(ctx, be, ds, cfg, train.Options{Mode: train.Hybrid}, o)
		if err != nil && !errors.As(err, &trialDone{}) {
			return trials, fmt.Errorf("hybrid: timing hot ratio %g: %w", c, err)
		}
		r := o.trial.result(c)
		trials = append(trials, r)
		if math.IsNaN(r.StepSeconds) {
			continue
		}
		if r.StepSeconds < best {
			best, bestRatio = r.StepSeconds, c
		} else if r.StepSeconds > 1.1*best {
			break
		}
	}
	opt.Hot.Ratio = bestRatio
	return trials, nil
}

// PrintTrials writes the trials and the choice.
func PrintTrials(w io.Writer, trials []HotTrial, chosen float64) {
	for _, t := range trials {
		if math.IsNaN(t.StepSeconds) {
			fmt.Fprintf(w, "  hot ratio %-5g: not timed (an epoch of too few super-batches)\n", t.Ratio)
			continue
		}
		fmt.Fprintf(w, "  hot ratio %-5g: %.3f ms per step over %d steps\n", t.Ratio, 1e3*t.StepSeconds, t.Steps)
	}
	fmt.Fprintf(w, "hot ratio %g chosen (--hot-ratio sets it)\n", chosen)
}
