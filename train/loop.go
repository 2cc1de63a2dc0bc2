package train

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The epoch loop's evaluations and its time to a target (runEpochs): every
// driver's epoch function calls validateWithin at the steps Config's
// evaluation schedule names, and endEpoch validates at the epochs' ends;
// both go through validate, which keeps the best model, counts the
// evaluations for the patience and stops the run at Config.TargetAcc.

// errStopped is returned by an epoch function whose validation within the
// epoch stopped the run (the target reached, or the patience spent); the
// steps it trained are in the run's state.
var errStopped = errors.New("train: the run stops at a validation")

// epochLoop is what the epoch loop holds while it runs.
type epochLoop struct {
	metrics *metricsLog
	start   time.Time // when this process's loop started
	base    float64   // seconds the run's loops took before (State.Elapsed of a resumed run)
	evalS   float64   // seconds of the validations within the epoch in progress
	// reached is where a validation first reached Config.TargetAcc (nil
	// until one does) and toTarget the run's elapsed seconds at its end.
	reached  *Position
	toTarget float64
}

// Position is a point of a run: an epoch (1-based), the steps of it
// trained (the epoch's steps at its end) and the steps of the run before.
type Position struct {
	Epoch      int `json:"epoch"`
	Step       int `json:"step"`
	GlobalStep int `json:"global_step"`
}

// newLoop starts the loop's clock where the run's state left it.
func (t *Trainer) newLoop(metrics *metricsLog) *epochLoop {
	return &epochLoop{metrics: metrics, start: time.Now(), base: t.state.Elapsed}
}

// elapsed is the run's wall time in seconds: its epoch loops' time, from
// the start of training (data loading, the model's and plans' set-up and
// the replay driver's first capture are before it) to now, evaluations,
// checkpoints and earlier processes of a resumed run included.
func (l *epochLoop) elapsed() float64 {
	if l == nil {
		return 0
	}
	return l.base + time.Since(l.start).Seconds()
}

// beginEpoch starts an epoch's clock: its training time leaves out its
// validations (trainedSince).
func (l *epochLoop) beginEpoch() time.Time {
	if l != nil {
		l.evalS = 0
	}
	return time.Now()
}

// trainedSince is the training time in seconds since start, an epoch's
// beginEpoch: the wall time less the validations within the epoch.
func (l *epochLoop) trainedSince(start time.Time) float64 {
	s := time.Since(start).Seconds()
	if l != nil {
		s -= l.evalS
	}
	return s
}

// evalDue says whether an epoch of steps steps validates after done of
// them: at every Config.EvalInterval steps, the epoch's end left to
// endEpoch.
func (t *Trainer) evalDue(done, steps int) bool {
	n := t.cfg.EvalInterval(steps)
	return n > 0 && done > 0 && done < steps && done%n == 0
}

// nextEval is the first step after s (0-based, of an epoch of steps steps)
// where the epoch validates or ends: a replayed run of steps stops there.
func (t *Trainer) nextEval(s, steps int) int {
	n := t.cfg.EvalInterval(steps)
	if n <= 0 {
		return steps
	}
	return min(steps, (s/n+1)*n)
}

// position is the point after done steps of the epoch in progress.
func (t *Trainer) position(done int) Position {
	return Position{Epoch: t.state.Epoch + 1, Step: done, GlobalStep: t.state.Epoch*t.epochSteps() + done}
}

// validateWithin validates after done steps of the epoch in progress, st
// being the epoch's line and figures setting its training figures so far:
// the validation's line in metrics.jsonl, TensorBoard and the progress
// output, the best model, and errStopped where the run stops there (the
// epoch's training time so far then added to the run's). Its time is left
// out of the epoch's training time.
func (t *Trainer) validateWithin(ctx context.Context, st EpochStats, done int, figures func(*EpochStats) error) error {
	st.Step = done
	if err := figures(&st); err != nil {
		return err
	}
	began := time.Now()
	defer func() { t.loop.evalS += time.Since(began).Seconds() }()
	pos := t.position(done)
	m, err := t.validate(ctx, pos, false)
	if err != nil {
		return err
	}
	st.Valid, st.GlobalStep, st.ElapsedS = m, pos.GlobalStep, t.loop.elapsed()
	t.dropFullLogits()
	if err := t.loop.metrics.Write(st); err != nil {
		return err
	}
	if err := t.tb.eval(st); err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	t.progress("", 0, 0)
	t.progressf("epoch %d/%d step %d/%d  loss %.4f  train acc %.4f  valid %s  (elapsed %s)\n",
		pos.Epoch, t.cfg.Epochs, done, st.Steps, st.Loss, st.TrainAcc, m.Text(t.head.MetricKeys()), seconds(st.ElapsedS))
	if t.stops() {
		t.state.Seconds += st.Seconds
		return errStopped
	}
	return nil
}

// validate evaluates the validation split at pos (at an epoch's end with
// end) and keeps the best model; where the task's primary figure reaches
// Config.TargetAcc for the first time, it records the time to it (the
// loop's elapsed time once the validation is done, before the best
// model's test and checkpoint) and says so. A group's ranks agree on the
// target (a collective every rank makes at every validation with a
// target).
func (t *Trainer) validate(ctx context.Context, pos Position, end bool) (Metrics, error) {
	m, err := t.head.Evaluate(ctx, Valid)
	if err != nil {
		return nil, err
	}
	at := t.loop.elapsed()
	step := pos.Step
	if end {
		step = 0 // State.BestStep's epoch end
	}
	if err := t.keepBest(ctx, m, pos.Epoch, step); err != nil {
		return nil, err
	}
	if t.cfg.TargetAcc <= 0 || t.loop == nil || t.loop.reached != nil {
		return m, nil
	}
	hit := int32(0)
	if m[t.head.Primary()] >= t.cfg.TargetAcc {
		hit = 1
	}
	agreed, err := t.maxHost([]int32{hit})
	if err != nil {
		return nil, err
	}
	if agreed[0] != 0 {
		t.loop.reached, t.loop.toTarget = &pos, at
		t.progressf("target %g (validation %s) reached at epoch %d step %d after %s\n",
			t.cfg.TargetAcc, MetricName(t.head.Primary()), pos.Epoch, pos.Step, seconds(at))
	}
	return m, nil
}

// stops says whether the run stops at the validation just made: its
// target reached, or its patience spent (said here).
func (t *Trainer) stops() bool {
	if t.loop != nil && t.loop.reached != nil {
		return true
	}
	if t.cfg.Patience > 0 && t.state.SinceBest >= t.cfg.Patience {
		t.progressf("early stop: no better validation %s in %d evaluations\n", MetricName(t.head.Primary()), t.state.SinceBest)
		return true
	}
	return false
}

// seconds prints s seconds to the millisecond.
func seconds(s float64) time.Duration {
	return (time.Duration(s*1e3) * time.Millisecond).Round(time.Millisecond)
}
