package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fanout-gnn/fanout/checkpoint"
)

// ErrInterrupted is returned by Run when its context was cancelled; the
// step in flight was finished and a resumable checkpoint was written.
var ErrInterrupted = errors.New("interrupted")

// EpochStats are one epoch's training figures (a line of metrics.jsonl),
// or, where Step is below Steps, those of its first Step steps at a
// validation within it (Config.EvalInterval).
type EpochStats struct {
	Epoch int `json:"epoch"` // 1-based
	Steps int `json:"steps"`
	// Step is the steps of the epoch trained at this line: Steps at its
	// end (0 in lines of earlier versions, which are all epochs' ends).
	Step int     `json:"step"`
	Loss float64 `json:"loss"` // mean over the epoch's steps (so far)
	// TrainAcc is the share of the epoch's predictions that were right
	// (labelled seeds; a link step's pairs on their label's side of 0).
	TrainAcc float64 `json:"train_acc"`
	// Valid is the validation's figures where the epoch validated.
	Valid Metrics `json:"valid,omitempty"`
	// Seconds is the epoch's training time (so far), its validations
	// excluded.
	Seconds   float64 `json:"seconds"`
	StepsPerS float64 `json:"steps_per_s"`
	// GlobalStep is the run's steps trained at this line (every epoch's)
	// and ElapsedS the run's wall time then in seconds, from the start of
	// training, validations and checkpoints included (epochLoop.elapsed).
	GlobalStep int     `json:"global_step"`
	ElapsedS   float64 `json:"elapsed_s"`
}

// within says whether the line is a validation within its epoch.
func (st EpochStats) within() bool { return st.Step > 0 && st.Step < st.Steps }

// Run trains the remaining epochs with the eager driver: the host writes
// each batch's seeds, issues the step, and reads the loss back.
func (t *Trainer) Run(ctx context.Context) (*Summary, error) {
	if t.plan == nil {
		return nil, errors.New("train: this trainer was made for a capturing mode (Options.Mode); use RunReplay")
	}
	return t.runEpochs(ctx, t.trainEpoch)
}

// RunReplay trains the remaining epochs with the replay driver: the whole
// step is captured once and replayed for every batch; the host writes each
// epoch's shuffled seeds and reads the loss and accuracy sums at its end.
// The backend must implement backend.Capturer.
func (t *Trainer) RunReplay(ctx context.Context, opt ReplayOptions) (*Summary, *ReplayStats, error) {
	r, err := t.newReplayer(opt)
	if err != nil {
		return nil, nil, err
	}
	t.rep = r
	defer func() { r.free(); t.rep = nil }()
	s, err := t.runEpochs(ctx, r.epoch)
	return s, &r.stats, err
}

// runEpochs trains the remaining epochs, one call of epoch each.
func (t *Trainer) runEpochs(ctx context.Context, epoch func(context.Context) (EpochStats, error)) (*Summary, error) {
	if err := t.maybeResume(); err != nil {
		return nil, err
	}
	if err := t.shareStart(); err != nil {
		return nil, err
	}
	metrics, err := openMetrics(t.opt.RunDir, t.opt.Resume)
	if err != nil {
		return nil, err
	}
	defer metrics.Close()
	if t.tb, err = t.openScalars(); err != nil {
		return nil, err
	}
	defer func() { t.tb.close(); t.tb = nil }()
	t.loop = t.newLoop(metrics)
	defer func() { t.loop = nil }()
	for t.state.Epoch < t.cfg.Epochs {
		t.scheduleEpoch()
		st, err := epoch(ctx)
		if errors.Is(err, errStopped) {
			// A validation within the epoch stopped the run: where it
			// stands is resumable.
			if err := t.saveCheckpoint(checkpoint.LastCheckpoint); err != nil {
				return nil, err
			}
			break
		}
		if err != nil {
			if errors.Is(err, ErrInterrupted) {
				if serr := t.saveCheckpoint(checkpoint.LastCheckpoint); serr != nil {
					return nil, fmt.Errorf("interrupted, and the checkpoint failed: %w", serr)
				}
			}
			return nil, err
		}
		if err := t.checkLoss(st); err != nil {
			return nil, err
		}
		if err := t.endEpoch(ctx, &st); err != nil {
			return nil, err
		}
		if err := t.tb.epoch(st); err != nil {
			return nil, fmt.Errorf("tensorboard: %w", err)
		}
		if t.opt.OnEpoch != nil {
			t.opt.OnEpoch(st)
		}
		if t.stops() {
			break
		}
	}
	s, err := t.finish()
	if err == nil && t.opt.OnFinish != nil {
		err = t.opt.OnFinish(t)
	}
	return s, err
}

// divergence is how many times an uninformed model's loss (ln of the
// number of classes: every class equally likely) an epoch's mean training
// loss may reach before the run stops. A model that learns stays far
// below it; GIN on tiny at its default rate, whose unnormalised sums at
// hub vertices reached an epoch loss of 700-1400 (337-673 times ln 8) in
// its first epoch when they estimated the full-degree sums (3.7 since they
// sum the sampled neighbours), stays below it; a diverging run passes it
// within an epoch or two (GIN on tiny at a rate of 1: 3.3e6) and would
// otherwise go on printing losses of 1e6 (GIN on products-sim).
const divergence = 1000

// growth is how many times its lowest epoch mean so far (the first
// epoch's at first) an epoch's mean training loss may reach, once above an
// uninformed model's, before the run stops: a model that learned and then
// blows up (GIN's sums at hubs once its weights grow) stops there instead
// of training on.
const growth = 100

// checkLoss stops a run whose epoch loss is not finite, above divergence
// times an uninformed model's, or grown growth-fold over the run's lowest
// epoch loss (and above an uninformed model's), naming the likely cause
// and what to change. The eager driver also stops at a step's non-finite
// loss; the replay driver reads losses only per epoch.
func (t *Trainer) checkLoss(st EpochStats) error {
	if st.Steps == 0 {
		return nil
	}
	hint := t.divergenceHint()
	if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
		return fmt.Errorf("epoch %d: the training loss is %v: the model diverged; %s", st.Epoch, st.Loss, hint)
	}
	uninformed := t.head.UninformedLoss()
	if st.Loss > divergence*uninformed {
		return fmt.Errorf("epoch %d: the training loss is %.4g, more than %d times an uninformed model's %.3g: the model diverges; %s",
			st.Epoch, st.Loss, divergence, uninformed, hint)
	}
	if low := t.lossMin; low > 0 && st.Loss > growth*low && st.Loss > uninformed {
		return fmt.Errorf("epoch %d: the training loss is %.4g, more than %d times the run's lowest epoch loss %.4g and above an uninformed model's %.3g: the model diverges; %s",
			st.Epoch, st.Loss, growth, low, uninformed, hint)
	}
	if t.lossMin == 0 || st.Loss < t.lossMin {
		t.lossMin = st.Loss
	}
	return nil
}

// divergenceHint names what to change when a run diverges: the learning
// rate, and, without normalisation, batch normalisation, which bounds
// what unnormalised sums over many neighbours (GIN's sums, which grow with
// the number of neighbours summed, up to the fanout) let grow.
func (t *Trainer) divergenceHint() string {
	hint := "lower --lr"
	if t.cfg.Norm == "" || t.cfg.Norm == "none" {
		cause := "sums over many neighbours grow unnormalised at high-degree vertices"
		if t.cfg.Model == "gin" {
			cause = "GIN's unnormalised sums of neighbours grow with the number summed, up to the fanout at every layer"
		}
		hint += ", or add --norm batch (" + cause + ")"
	}
	return hint
}

// trainEpoch runs the steps of the current epoch from StepInEpoch on,
// validating within it where Config.EvalInterval says.
func (t *Trainer) trainEpoch(ctx context.Context) (EpochStats, error) {
	epoch := t.state.Epoch
	perm, steps := t.epochSeeds(epoch)
	st := EpochStats{Epoch: epoch + 1, Steps: steps}
	start := t.loop.beginEpoch()
	var lossSum float64
	var correct int64
	var seen int
	host := make([]float32, 1)
	cnt := make([]int32, 1)
	first := t.state.StepInEpoch
	if err := t.startChunks(); err != nil {
		return st, err
	}
	for s := first; s < steps; s++ {
		if stop, err := t.stopAgreed(ctx, true); err != nil || stop {
			t.state.Seconds += t.loop.trainedSince(start)
			if err != nil {
				return st, err
			}
			return st, ErrInterrupted
		}
		seeds := t.stepSeeds(perm, s)
		global := t.globalLive(s)
		t.plan.SetItems(seeds, global, epoch, s)
		t.plan.SampleTrain(t.in, t.cfg.Seed)
		t.plan.Gather(t.in)
		if err := t.gatherFits(t.plan); err != nil {
			return st, fmt.Errorf("epoch %d step %d: %w", epoch+1, s, err)
		}
		loss, corr := t.plan.Learn(t.model, t.in, t.cfg.Seed, t.adam)
		t.be.Read(host, loss, 0)
		t.be.Read(cnt, corr.Buf, corr.Off)
		if err := t.sync(); err != nil {
			return st, fmt.Errorf("epoch %d step %d: %w", epoch+1, s, err)
		}
		if math.IsNaN(float64(host[0])) || math.IsInf(float64(host[0]), 0) {
			return st, fmt.Errorf("epoch %d step %d: the loss is %v; lower --lr", epoch+1, s, host[0])
		}
		if t.opt.OnStep != nil {
			t.opt.OnStep(epoch, s, host[0])
		}
		if len(seeds) > 0 {
			// A rank's loss is its share of the batch's: its seeds' mean is
			// the share times the batch over its seeds.
			if err := t.tb.step(epoch, s, float64(host[0])*float64(global)/float64(len(seeds))); err != nil {
				return st, err
			}
		}
		lossSum += float64(host[0])
		correct += int64(cnt[0])
		seen += t.head.Outcomes(global)
		t.state.StepInEpoch = s + 1
		t.state.AdamT++
		t.progress(t.epochStage(), s+1, steps)
		if t.evalDue(s+1, steps) {
			n := s + 1 - first
			if err := t.validateWithin(ctx, st, s+1, func(f *EpochStats) error {
				return t.epochFigures(f, lossSum, correct, seen, n, start)
			}); err != nil {
				return st, err
			}
		}
	}
	st.Step = steps
	if err := t.epochFigures(&st, lossSum, correct, seen, steps-first, start); err != nil {
		return st, err
	}
	t.state.Seconds += st.Seconds
	return st, nil
}

// epochFigures sets st's training figures from this rank's sums over the n
// steps of the epoch it trained since start (its beginEpoch): lossSum of
// the steps' losses, correct of the right predictions among seen. A
// group's figures are its ranks' sums (a collective every rank makes).
func (t *Trainer) epochFigures(st *EpochStats, lossSum float64, correct int64, seen, n int, start time.Time) error {
	// A rank's losses are its shares of the batches' losses and its correct
	// counts its seeds': the group's sums are the epoch's.
	sums, err := t.reduceHost([]float32{float32(lossSum), float32(correct)})
	if err != nil {
		return err
	}
	if t.opt.Parallel != nil {
		lossSum, correct = float64(sums[0]), int64(sums[1])
	}
	st.Seconds = t.loop.trainedSince(start)
	if n > 0 {
		st.Loss = lossSum / float64(n)
	}
	if seen > 0 {
		st.TrainAcc = float64(correct) / float64(seen)
	}
	if n > 0 && st.Seconds > 0 {
		st.StepsPerS = float64(n) / st.Seconds
	}
	return nil
}

// endEpoch validates when due, keeps the best checkpoint, writes the
// epoch's metrics line and then the resumable checkpoint, and prints the
// epoch's line.
func (t *Trainer) endEpoch(ctx context.Context, st *EpochStats) error {
	pos := t.position(st.Steps)
	t.state.Epoch++
	t.state.StepInEpoch = 0
	valid := ""
	evalStart := time.Now()
	if t.state.Epoch%t.cfg.EvalEvery == 0 || t.state.Epoch == t.cfg.Epochs {
		m, err := t.validate(ctx, pos, true)
		if err != nil {
			return err
		}
		st.Valid = m
		valid = "  valid " + m.Text(t.head.MetricKeys())
	}
	// Layer-wise inference's logits served this epoch's evaluations; they
	// would only hold memory during training.
	t.dropFullLogits()
	st.GlobalStep, st.ElapsedS = pos.GlobalStep, t.loop.elapsed()
	// The epoch's metrics line goes first: a run killed between the two
	// leaves at most a line past last.ckpt, which resume drops, never a
	// checkpoint whose epoch has no line.
	if err := t.loop.metrics.Write(*st); err != nil {
		return err
	}
	if err := t.saveCheckpoint(checkpoint.LastCheckpoint); err != nil {
		return err
	}
	perEpoch := t.state.Seconds / float64(t.state.Epoch)
	eta := time.Duration(perEpoch*float64(t.cfg.Epochs-t.state.Epoch)) * time.Second
	t.progress("", 0, 0)
	t.progressf("epoch %d/%d  %d steps  %.1f steps/s  loss %.4f  train acc %.4f%s  (train %.2fs; evaluation and checkpoints %.2fs)  ETA %s\n",
		t.state.Epoch, t.cfg.Epochs, st.Steps, st.StepsPerS, st.Loss, st.TrainAcc, valid, st.Seconds, time.Since(evalStart).Seconds(), eta.Round(time.Second))
	return nil
}

// keepBest records a validation's figures m, made after step steps of the
// 1-based epoch (0: at its end): where its primary figure is the best so
// far (or the first), the model's test figures and the best checkpoint;
// otherwise one more evaluation since the best.
func (t *Trainer) keepBest(ctx context.Context, m Metrics, epoch, step int) error {
	v := m[t.head.Primary()]
	if t.state.BestEpoch != 0 && !(v > t.state.BestValid) {
		t.state.SinceBest++
		return nil
	}
	test, err := t.head.Evaluate(ctx, Test)
	if err != nil {
		return err
	}
	t.state.BestValid, t.state.BestEpoch, t.state.BestStep, t.state.SinceBest = v, epoch, step, 0
	t.state.TestAtBest = test[t.head.Primary()]
	if t.state.BestMetrics, err = json.Marshal(m); err != nil {
		return err
	}
	if t.state.TestMetrics, err = json.Marshal(test); err != nil {
		return err
	}
	return t.saveCheckpoint(checkpoint.BestCheckpoint)
}
