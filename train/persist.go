package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// Snapshot copies the model, its optimizer state and the run's state to
// the host.
func (t *Trainer) Snapshot() (*checkpoint.Checkpoint, error) {
	c := &checkpoint.Checkpoint{Config: t.cfg, Model: t.model.Config(), State: t.state, Dataset: t.fingerprint()}
	for _, p := range t.model.Params() {
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

// Restore loads a checkpoint's parameters, optimizer moments and run state.
// The model's configuration and the dataset's shape must match.
func (t *Trainer) Restore(c *checkpoint.Checkpoint) error {
	if c.Model != t.model.Config() {
		return fmt.Errorf("checkpoint model %+v differs from this run's %+v", c.Model, t.model.Config())
	}
	if c.Dataset.FeatDim != t.ds.FeatDim || c.Dataset.Classes != t.ds.NumClasses {
		return fmt.Errorf("checkpoint was trained on %s (%d features, %d classes); this dataset has %d features, %d classes",
			c.Dataset.Name, c.Dataset.FeatDim, c.Dataset.Classes, t.ds.FeatDim, t.ds.NumClasses)
	}
	ps := t.model.Params()
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
	t.be.Write(t.plan.Counts, t.plan.AdamT.Off, []int32{c.State.AdamT})
	return t.be.Sync()
}

// saveCheckpoint writes RunDir/name when a run directory is set.
func (t *Trainer) saveCheckpoint(name string) error {
	if t.opt.RunDir == "" {
		return nil
	}
	c, err := t.Snapshot()
	if err != nil {
		return err
	}
	return c.Save(filepath.Join(t.opt.RunDir, name))
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

// maybeResume restores RunDir/last.ckpt when resuming.
func (t *Trainer) maybeResume() error {
	if !t.opt.Resume || t.opt.RunDir == "" {
		return nil
	}
	path := filepath.Join(t.opt.RunDir, checkpoint.LastCheckpoint)
	c, err := checkpoint.Load(path)
	if err != nil {
		return err
	}
	if c.Config.Seed != t.cfg.Seed || c.Config.Batch != t.cfg.Batch || !slices.Equal(c.Config.Fanouts, t.cfg.Fanouts) {
		return fmt.Errorf("%s: seed, batch or fanouts differ from this run's; resume with the same configuration", path)
	}
	if diff := c.Dataset.Mismatch(t.fingerprint()); diff != "" {
		return fmt.Errorf("%s was trained on %s; this dataset (%s) differs: %s", path, c.Dataset.Name, t.ds.Name, diff)
	}
	if err := t.Restore(c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if changed := checkpoint.Changed(c.Config, t.cfg); changed != "" {
		t.progressf("resuming with settings the run did not have: %s\n", changed)
	}
	if c.Format < checkpoint.CurrentFormat {
		t.progressf("%s\n", checkpoint.OldFormatNote(path, c))
	}
	t.progressf("resumed from %s at epoch %d step %d\n", path, c.State.Epoch+1, c.State.StepInEpoch)
	return nil
}

// Summary is what a finished run reports (RunDir/summary.json).
type Summary struct {
	BestValidAcc float64 `json:"best_valid_acc"`
	BestEpoch    int     `json:"best_epoch"`
	TestAcc      float64 `json:"test_acc"` // test accuracy of the best-validation model
	Epochs       int     `json:"epochs"`   // epochs trained
	Seconds      float64 `json:"seconds"`  // training wall time, evaluation excluded
	Device       string  `json:"device"`
	Dataset      string  `json:"dataset"`
	// The seeds of one step on each device and over the whole group
	// (Config.Batch), and the group's devices (1 alone).
	DeviceBatch int    `json:"device_batch"`
	GlobalBatch int    `json:"global_batch"`
	Devices     int    `json:"devices"`
	Config      Config `json:"config"`
}

// finish writes summary.json and returns the summary.
func (t *Trainer) finish() (*Summary, error) {
	s := &Summary{BestValidAcc: t.state.BestValid, BestEpoch: t.state.BestEpoch, TestAcc: t.state.TestAtBest,
		Epochs: t.state.Epoch, Seconds: t.state.Seconds, Device: t.opt.Device, Dataset: t.ds.Name, Config: t.cfg}
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

// fingerprint is the fingerprint of the trainer's dataset, computed once.
func (t *Trainer) fingerprint() checkpoint.DatasetInfo {
	if t.fp == nil {
		fp := checkpoint.Fingerprint(t.ds)
		t.fp = &fp
	}
	return *t.fp
}
