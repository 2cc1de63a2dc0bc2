package train

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fanout-gnn/fanout/report/tensorboard"
)

// scalars writes a run's figures as TensorBoard event files
// (Options.TensorBoard): per epoch its loss, accuracies, time and steps/s,
// and the mean training loss of every scalarWindow steps. A nil scalars
// writes nothing.
type scalars struct {
	w        *tensorboard.Writer
	perEpoch int     // steps of an epoch, for the global step
	sum      float64 // the losses of the steps since the last point
	n        int
}

// scalarWindow is how many steps one point of the training loss covers:
// the replay driver's window (it reads the device's loss sums there, at a
// host round trip it makes anyway).
const scalarWindow = agreeWindow

// openScalars opens the event file when the run asks for one.
func (t *Trainer) openScalars() (*scalars, error) {
	if t.opt.TensorBoard == "" {
		return nil, nil
	}
	w, err := tensorboard.Open(t.opt.TensorBoard)
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	return &scalars{w: w, perEpoch: t.epochSteps()}, nil
}

// step adds one step's loss (epoch and step 0-based) and writes a point
// at the end of every scalarWindow steps of the epoch, where the replay
// driver writes its points.
func (s *scalars) step(epoch, step int, loss float64) error {
	if s == nil {
		return nil
	}
	s.sum += loss
	s.n++
	if (step+1)%scalarWindow != 0 {
		return nil
	}
	return s.window(epoch, step, s.sum, s.n)
}

// window writes the mean loss of n steps ending at step of epoch (their
// summed losses sum).
func (s *scalars) window(epoch, step int, sum float64, n int) error {
	if s == nil || n == 0 {
		return nil
	}
	s.sum, s.n = 0, 0
	return s.w.Scalar("train/loss", int64(epoch*s.perEpoch+step+1), sum/float64(n))
}

// epoch writes an epoch's figures at the epoch's number (1-based) and
// flushes the file, so that TensorBoard shows them while the run goes on.
func (s *scalars) epoch(st EpochStats) error {
	if s == nil {
		return nil
	}
	s.sum, s.n = 0, 0
	if err := s.eval(st); err != nil {
		return err
	}
	e := int64(st.Epoch)
	errs := []error{
		s.w.Scalar("epoch/loss", e, st.Loss),
		s.w.Scalar("epoch/train_acc", e, st.TrainAcc),
		s.w.Scalar("epoch/seconds", e, st.Seconds),
		s.w.Scalar("epoch/steps_per_s", e, st.StepsPerS),
	}
	keys := make([]string, 0, len(st.Valid))
	for k := range st.Valid {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		errs = append(errs, s.w.Scalar("epoch/valid_"+k, e, st.Valid[k]))
	}
	errs = append(errs, s.w.Flush())
	return errors.Join(errs...)
}

// eval writes a validation's figures (st.Valid) and the run's elapsed
// seconds at the run's step (st.GlobalStep), for every validation, within
// epochs and at their ends, and flushes the file.
func (s *scalars) eval(st EpochStats) error {
	if s == nil || len(st.Valid) == 0 {
		return nil
	}
	step := int64(st.GlobalStep)
	keys := make([]string, 0, len(st.Valid))
	for k := range st.Valid {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		errs = append(errs, s.w.Scalar("valid/"+k, step, st.Valid[k]))
	}
	errs = append(errs, s.w.Scalar("valid/elapsed_s", step, st.ElapsedS), s.w.Flush())
	return errors.Join(errs...)
}

// close closes the event file.
func (s *scalars) close() error {
	if s == nil {
		return nil
	}
	return s.w.Close()
}

// windowLoss writes the replay driver's point of the training loss at a
// window: the device's loss sum of the epoch (acc[0], read with the flag)
// less the sum at the last point, over the steps since. A rank's losses
// are its shares of the batches' losses, so a group's rank scales them by
// the group's size.
func (r *replayer) windowLoss(epoch, last int, sum float32) error {
	t := r.t
	if t.tb == nil || last <= r.tbStep {
		return nil
	}
	_, size := t.rankSize()
	n := last - r.tbStep
	mean := float64(sum-r.tbSum) * float64(size)
	r.tbSum, r.tbStep = sum, last
	return t.tb.window(epoch, last, mean, n)
}
