package job

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/train"
)

// runOne trains on one device: eager or replay, or hybrid where asked or
// where auto finds the data too large for the GPU.
func runOne(ctx context.Context, j *Job) (*train.Summary, error) {
	be, desc, err := OpenBackend(j.Device, j.Threads, j.CUDA, j.Log)
	if err != nil {
		return nil, err
	}
	defer CloseBackend(be)
	ds, err := j.load()
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	cfg, opt := j.Config, j.Options
	j.fitBatch(&cfg, ds, 1, j.Log)
	if err := checkMemory(be, cfg, ds, 1); err != nil {
		return nil, err
	}
	mode := resolve(j.Mode, be)
	if autoHybrid(j.Mode, mode, be, ds, opt.FeatureDType, j.Log) {
		mode = train.Hybrid
		if j.BottomDefault { // the hybrid mode's hot vertices need float32 bottom rows
			cfg.BottomProducts = ""
		}
	}
	if err := j.taskOptions(&opt); err != nil {
		return nil, err
	}
	if ctx.Err() != nil { // a signal while the data loaded: nothing trained yet
		return nil, j.stoppedBeforeTraining()
	}
	if mode == train.Hybrid {
		return j.runHybrid(ctx, be, desc, ds, cfg, opt)
	}
	fmt.Fprintf(j.Log, "training %s on %s with %s, %s mode\n", describeRun(cfg), ds.Name, desc, mode)
	if mode == train.Replay {
		be = WithCapture(be)
	}
	opt.Device, opt.Mode = desc, mode
	tr, err := train.New(be, ds, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	sum, err := j.drive(ctx, tr, mode)
	if errors.Is(err, train.ErrInterrupted) {
		if opt.RunDir == "" {
			fmt.Fprintln(j.Log, "interrupted (no --out: nothing saved)")
		} else {
			fmt.Fprintf(j.Log, "interrupted: saved %s; continue with --resume\n", filepath.Join(opt.RunDir, checkpoint.LastCheckpoint))
		}
		return nil, ErrInterrupted
	}
	return sum, err
}

// drive trains with the replay or the eager driver, as mode says.
func (j *Job) drive(ctx context.Context, tr *train.Trainer, mode train.Mode) (*train.Summary, error) {
	if !mode.Captures() {
		return tr.Run(ctx)
	}
	sum, st, err := tr.RunReplay(ctx, j.Replay)
	if st != nil {
		fmt.Fprintf(j.Log, "replay: %d captures, %d overflows re-run, envelope %.1f MiB (ideal %.1f MiB)\n",
			st.Captures, st.Overflows, float64(st.Envelope.Bytes)/(1<<20), float64(st.Envelope.IdealBytes)/(1<<20))
		fmt.Fprintln(j.Log, replayTimes(st))
	}
	return sum, err
}

// interrupted says a cancelled run stopped and returns ErrInterrupted; any
// other error as it is.
func (j *Job) interrupted(err error) error {
	if errors.Is(err, train.ErrInterrupted) {
		fmt.Fprintln(j.Log, "interrupted")
		return ErrInterrupted
	}
	return err
}

// stoppedBeforeTraining says that a job stopped by a signal before its
// first step saved nothing, and returns ErrInterrupted.
func (j *Job) stoppedBeforeTraining() error {
	if j.Options.RunDir == "" {
		fmt.Fprintln(j.Log, "interrupted (no --out: nothing saved)")
	} else {
		fmt.Fprintf(j.Log, "interrupted before the first step: nothing saved in %s; run it again (there is nothing to resume)\n", j.Options.RunDir)
	}
	return ErrInterrupted
}

// replayTimes says where the replay driver's time went: its launches in
// the launch loops' wall time, the device's busy time within them where
// the backend times it, and the growths (sampling, provisioning and
// capturing again after overflows), outside the loops' time.
func replayTimes(st *train.ReplayStats) string {
	per := func(s float64) float64 { return 1e3 * s / float64(max(st.Launches, 1)) }
	out := fmt.Sprintf("replay: %d launches in %.2f s of launch loops (%.3f ms each)", st.Launches, st.WallS, per(st.WallS))
	if st.BusyS > 0 {
		out += fmt.Sprintf(", the device busy %.2f s of it (%.3f ms each)", st.BusyS, per(st.BusyS))
	}
	return out + fmt.Sprintf("; growths %.2f s", st.GrowS)
}
