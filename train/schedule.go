package train

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The learning-rate schedules (Config.LRSchedule, --lr-schedule).
const (
	// ScheduleConstant keeps Config.LR in every epoch (the default).
	ScheduleConstant = "constant"
	// ScheduleCosine anneals it epoch by epoch along half a cosine: epoch
	// e (from 0) of n runs at LR·(1 + cos(π·e/n))/2, the first at LR and
	// the last at LR·(1 + cos(π·(n-1)/n))/2 (2.4% of it over ten epochs).
	ScheduleCosine = "cosine"
)

func validSchedule(s string) bool {
	return s == "" || s == ScheduleConstant || s == ScheduleCosine
}

// LRFactor is the schedule's factor of the learning rate in epoch e (from
// 0) of a run of n epochs.
func LRFactor(schedule string, e, n int) float32 {
	if schedule != ScheduleCosine || n <= 1 {
		return 1
	}
	return float32(0.5 * (1 + math.Cos(math.Pi*float64(min(e, n-1))/float64(n))))
}

// newSchedule gives Adam a learning-rate factor in backend memory where the
// schedule varies it (AdamConfig.LRScale), so that every driver's step,
// captured or not, reads the factor of the epoch it runs in.
func (t *Trainer) newSchedule() error {
	if t.cfg.LRSchedule != ScheduleCosine {
		return nil
	}
	buf, err := t.be.Alloc(backend.F32, 1)
	if err != nil {
		return err
	}
	t.be.Fill(buf, 1)
	t.adam.LRScale = buf
	return nil
}

// scheduleEpoch writes the factor of the epoch about to run (the run's
// epochs done so far, t.state.Epoch, count from 0), in the backend's
// order: after the steps of the epoch before, before those of this one.
func (t *Trainer) scheduleEpoch() {
	if t.adam.LRScale != nil {
		t.be.Write(t.adam.LRScale, 0, []float32{LRFactor(t.cfg.LRSchedule, t.state.Epoch, t.cfg.Epochs)})
	}
}

// freeSchedule releases the factor.
func (t *Trainer) freeSchedule() {
	if t.adam.LRScale != nil {
		t.be.Free(t.adam.LRScale)
		t.adam.LRScale = nil
	}
}
