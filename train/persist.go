package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
	"github.com/fanout-gnn/fanout/nn"
)

// Snapshot copies the model and the task's tensors, their optimizer
// state and the run's state to the host.
func (t *Trainer) Snapshot() (*checkpoint.Checkpoint, error) {
	cfg, err := json.Marshal(t.cfg)
	if err != nil {
		return nil, err
	}
	model, err := json.Marshal(t.model.Config())
	if err != nil {
		return nil, err
	}
	if t.loop != nil {
		t.state.Elapsed = t.loop.elapsed()
	}
	c := &checkpoint.Checkpoint{Config: cfg, Model: model, State: t.state, Dataset: t.fingerprint()}
	for _, p := range t.Params() {
		c.Params = append(c.Params, checkpoint.ParamInfo{Name: p.Name, Shape: p.Shape})
		var d [3][]float32
		for k := range d {
			d[k] = make([]float32, p.W.Len())
		}
		t.be.Read(d[0], p.W, 0)
		t.be.Read(d[1], p.M, 0)
		t.be.Read(d[2], p.V, 0)
		c.Data = append(c.Data, d)
	}
	// The Adam step number lives on the device (the replay driver never
	// reads it back during an epoch): a checkpoint of a replayed run once
	// kept the host's stale copy, and a resumed run restarted Adam's bias
	// correction.
	adamT := make([]int32, 1)
	if t.plan != nil {
		t.be.Read(adamT, t.plan.Counts, t.plan.AdamT.Off)
	}
	if err := t.be.Sync(); err != nil {
		return nil, err
	}
	if t.plan != nil {
		c.State.AdamT = adamT[0]
		t.state.AdamT = adamT[0]
	}
	return c, nil
}

// Restore loads a checkpoint's parameters (the model's and the task's),
// optimizer moments and run state. The model's configuration and the
// dataset's shape must match.
func (t *Trainer) Restore(c *checkpoint.Checkpoint) error {
	var model nn.Config
	if err := json.Unmarshal(c.Model, &model); err != nil {
		return fmt.Errorf("the checkpoint's model configuration: %w", err)
	}
	if diff := Differences(model, t.model.Config()); diff != "" {
		return fmt.Errorf("the checkpoint's model differs from this run's: %s", diff)
	}
	if c.Dataset.FeatDim != t.ds.FeatDim || c.Dataset.Classes != t.ds.NumClasses {
		return fmt.Errorf("checkpoint was trained on %s (%d features, %d classes); this dataset has %d features, %d classes",
			c.Dataset.Name, c.Dataset.FeatDim, c.Dataset.Classes, t.ds.FeatDim, t.ds.NumClasses)
	}
	ps := t.Params()
	if len(ps) != len(c.Params) {
		return fmt.Errorf("checkpoint has %d parameters, the model %d", len(c.Params), len(ps))
	}
	for i, p := range ps {
		if c.Params[i].Name != p.Name || !slices.Equal(c.Params[i].Shape, p.Shape) {
			return fmt.Errorf("checkpoint parameter %d is %s%v, the model's %s%v", i, c.Params[i].Name, c.Params[i].Shape, p.Name, p.Shape)
		}
		t.be.Write(p.W, 0, c.Data[i][0])
		t.be.Write(p.M, 0, c.Data[i][1])
		t.be.Write(p.V, 0, c.Data[i][2])
	}
	t.state = c.State
	if t.plan != nil {
		t.be.Write(t.plan.Counts, t.plan.AdamT.Off, []int32{c.State.AdamT})
	}
	return t.be.Sync()
}

// saveCheckpoint writes RunDir/name when a run directory is set, and
// keeps the best model in memory with Options.KeepBest.
func (t *Trainer) saveCheckpoint(name string) error {
	keep := t.opt.KeepBest && name == checkpoint.BestCheckpoint
	if t.opt.RunDir == "" && !keep {
		return nil
	}
	c, err := t.Snapshot()
	if err != nil {
		return err
	}
	if keep {
		t.best = c
	}
	if t.opt.RunDir == "" {
		return nil
	}
	return c.Save(filepath.Join(t.opt.RunDir, name))
}

// UseBest loads the parameters of the run's best model (by the task's
// primary validation figure) into the trainer: the copy Options.KeepBest
// keeps, or RunDir's best.ckpt. The run state is left as it is.
func (t *Trainer) UseBest() error {
	c := t.best
	if c == nil {
		if t.opt.RunDir == "" {
			return errors.New("train: no best model kept (no run directory, and Options.KeepBest unset)")
		}
		var err error
		if c, err = checkpoint.Load(filepath.Join(t.opt.RunDir, checkpoint.BestCheckpoint)); err != nil {
			return err
		}
	}
	state := t.state
	err := t.Restore(c)
	t.state = state
	if t.plan != nil {
		t.be.Write(t.plan.Counts, t.plan.AdamT.Off, []int32{state.AdamT})
	}
	return err
}

// RunMode is what the options ask of a run directory; Resume and Force
// together are an error.
func (o Options) RunMode() (checkpoint.RunMode, error) {
	switch {
	case o.Resume && o.Force:
		return 0, errors.New("--resume and --force exclude each other: resume the run or start it again")
	case o.Resume:
		return checkpoint.ResumeRun, nil
	case o.Force:
		return checkpoint.ForceRun, nil
	}
	return checkpoint.NewRun, nil
}

// openRunDir opens and locks Options.RunDir when it is set.
func (t *Trainer) openRunDir() (*checkpoint.RunDir, error) {
	if t.opt.RunDir == "" {
		if t.opt.Resume {
			return nil, errors.New("--resume needs a run directory (--out)")
		}
		return nil, nil
	}
	mode, err := t.opt.RunMode()
	if err != nil {
		return nil, err
	}
	r, err := checkpoint.OpenRunDir(t.opt.RunDir, mode)
	if err != nil {
		return nil, err
	}
	if len(r.Removed) > 0 {
		t.progressf("removed %d temporary file(s) an interrupted run left in %s\n", len(r.Removed), r.Path)
	}
	return r, nil
}

// maybeResume restores RunDir/last.ckpt when resuming. The dataset and
// every setting but the number of epochs and the patience must be the
// saved run's; a difference is an error naming it.
func (t *Trainer) maybeResume() error {
	if !t.opt.Resume || t.opt.RunDir == "" {
		return nil
	}
	path := filepath.Join(t.opt.RunDir, checkpoint.LastCheckpoint)
	s, err := LoadSaved(path)
	if err != nil {
		return err
	}
	c := s.File
	if diff := c.Dataset.Mismatch(t.fingerprint()); diff != "" {
		return fmt.Errorf("%s was trained on dataset %s; this dataset, %s, differs: %s", path, c.Dataset.Name, t.ds.Name, diff)
	}
	if diff := Differences(s.Config, t.cfg, resumable()...); diff != "" {
		return fmt.Errorf("%s: this run's settings differ from the saved run's: %s; resume with the saved settings (only %s may change), or start again with --force",
			path, diff, listed(resumable()))
	}
	if err := t.Restore(c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if changed := Differences(s.Config, t.cfg); changed != "" {
		t.progressf("resuming with %s\n", changed)
	}
	if c.Format < checkpoint.CurrentFormat {
		t.progressf("%s\n", checkpoint.OldFormatNote(path, c))
	}
	t.progressf("resumed from %s at epoch %d step %d\n", path, c.State.Epoch+1, c.State.StepInEpoch)
	return nil
}

// resumable are the settings a resumed run may change: how long it runs.
// The evaluation schedule is not among them: it decides which model is
// the best and when the patience runs out.
func resumable() []string { return []string{"epochs", "patience", "target_acc"} }

// listed joins names as a sentence lists them: "a, b and c".
func listed(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Summary is what a finished run reports (RunDir/summary.json): the
// run's figures, the task's nested (BestValid, Test).
type Summary struct {
	Task      string `json:"task"`
	BestEpoch int    `json:"best_epoch"` // 1-based; 0 when the run never evaluated
	// BestStep is the step of BestEpoch after which the best validation
	// ran, absent for the validation at the epoch's end.
	BestStep  int     `json:"best_step,omitempty"`
	BestValid Metrics `json:"best_valid"` // the best validation's figures
	Test      Metrics `json:"test"`       // the test figures of the best-validation model
	Epochs    int     `json:"epochs"`     // epochs trained whole
	// Steps is every step trained, those of an epoch a validation
	// stopped within included.
	Steps   int     `json:"steps"`
	Seconds float64 `json:"seconds"` // training wall time, evaluation excluded
	// ElapsedS is the run's wall time in seconds from the start of
	// training (after the data's loading and the set-up of the model, the
	// plans and the replay driver's capture) to its end, evaluations and
	// checkpoints included; a resumed run adds its earlier processes'.
	ElapsedS float64 `json:"elapsed_s"`
	// Where Config.TargetAcc is set: TargetReached, and where it is, the
	// elapsed time (as ElapsedS counts it) at the end of the first
	// validation that reached it, and where in the run that was.
	TargetReached   *bool     `json:"target_reached,omitempty"`
	TimeToTarget    *float64  `json:"time_to_target_s,omitempty"`
	TargetReachedAt *Position `json:"target_reached_at,omitempty"`
	Device          string    `json:"device"`
	Dataset         string    `json:"dataset"`
	// The items of one step on each device and over the whole group
	// (Config.Batch), and the group's devices (1 alone).
	DeviceBatch int    `json:"device_batch"`
	GlobalBatch int    `json:"global_batch"`
	Devices     int    `json:"devices"`
	Config      Config `json:"config"`
	// Primary is the key of the figure that picked the best model, and
	// Keys the figures in the order messages print them.
	Primary string   `json:"primary"`
	Keys    []string `json:"-"`
	within  int      // the steps of the epoch a validation stopped the run in
}

// Line is the run's summary in one line: the test figures of the best
// model and the validation that picked it, and where a target was set,
// the time to it or that it was not reached.
func (s *Summary) Line() string {
	at := fmt.Sprintf("epoch %d", s.BestEpoch)
	if s.BestStep > 0 {
		at += fmt.Sprintf(" step %d", s.BestStep)
	}
	trained := fmt.Sprintf("%d epochs", s.Epochs)
	if s.within > 0 {
		trained += fmt.Sprintf(" and %d steps", s.within)
	}
	line := fmt.Sprintf("test %s (best validation %s %.4f at %s; %s in %s)",
		s.Test.Text(s.Keys), MetricName(s.Primary), s.BestValid[s.Primary], at, trained, seconds(s.Seconds))
	switch {
	case s.TargetReached == nil:
	case *s.TargetReached:
		line += fmt.Sprintf("; target %g reached at epoch %d step %d after %s", s.Config.TargetAcc,
			s.TargetReachedAt.Epoch, s.TargetReachedAt.Step, seconds(*s.TimeToTarget))
	default:
		line += fmt.Sprintf("; target %g not reached after %s", s.Config.TargetAcc, trained)
	}
	return line
}

// finish writes summary.json and returns the summary.
func (t *Trainer) finish() (*Summary, error) {
	s := &Summary{Task: t.cfg.TaskName(), BestEpoch: t.state.BestEpoch, BestStep: t.state.BestStep, Epochs: t.state.Epoch,
		Steps: t.state.Epoch*t.epochSteps() + t.state.StepInEpoch, Seconds: t.state.Seconds, ElapsedS: t.loop.elapsed(),
		Device: t.opt.Device, Dataset: t.ds.Name, Config: t.cfg, Primary: t.head.Primary(), Keys: t.head.MetricKeys(),
		within: t.state.StepInEpoch}
	if t.cfg.TargetAcc > 0 {
		reached := t.loop != nil && t.loop.reached != nil
		s.TargetReached = &reached
		if reached {
			s.TimeToTarget, s.TargetReachedAt = &t.loop.toTarget, t.loop.reached
		}
	}
	var err error
	if s.BestValid, err = metricsOf(t.state.BestMetrics, s.Primary, t.state.BestValid); err != nil {
		return nil, err
	}
	if s.Test, err = metricsOf(t.state.TestMetrics, s.Primary, t.state.TestAtBest); err != nil {
		return nil, err
	}
	_, s.Devices = t.rankSize()
	s.DeviceBatch, s.GlobalBatch = t.batch(), t.cfg.Batch
	if t.opt.RunDir == "" {
		return s, nil
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return s, atomicfile.Write(filepath.Join(t.opt.RunDir, checkpoint.SummaryFile), append(b, '\n'))
}

// metricsOf decodes figures a run state keeps (JSON), or, from a state
// that kept only the primary figure (checkpoints of earlier versions),
// that figure under key.
func metricsOf(js []byte, key string, primary float64) (Metrics, error) {
	if len(js) == 0 {
		return Metrics{key: primary}, nil
	}
	var m Metrics
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("the run state's figures: %w", err)
	}
	return m, nil
}

// fingerprint is the fingerprint of the trainer's dataset, computed once.
func (t *Trainer) fingerprint() checkpoint.DatasetInfo {
	if t.fp == nil {
		fp := Fingerprint(t.ds)
		t.fp = &fp
	}
	return *t.fp
}
