package link

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// Files of a link run in its run directory (Trainer.RunDir): the last
// epoch's checkpoint (the model's and the decoder's weights and Adam
// moments, the Adam step), the best model's weights, and the run's link
// settings and figures so far.
const (
	LastFile  = "link_last.ckpt"
	BestFile  = "link_best.ckpt"
	StateFile = "link_state.json"
)

// decoderPrefix names the decoder's tensors in a checkpoint.
const decoderPrefix = "decoder."

// savedState is StateFile: what a resumed run needs besides the tensors.
type savedState struct {
	Config    Config   `json:"config"`
	Summary   *Summary `json:"summary"`
	SinceBest int      `json:"evals_since_best"`
}

// tensors lists the learnt tensors with their names: the model's, then the
// decoder's.
func (t *Trainer) tensors() []tensorRef {
	var ps []tensorRef
	for _, p := range t.m.Params() {
		ps = append(ps, tensorRef{p.Name, p.Shape, p.W, p.M, p.V})
	}
	for _, p := range t.dec.params {
		ps = append(ps, tensorRef{decoderPrefix + p.Name, []int{p.Rows, p.Cols}, p.W, p.M, p.V})
	}
	return ps
}

type tensorRef struct {
	name    string
	shape   []int
	w, m, v backend.Buffer
}

// save writes the run's state after an epoch (s: the figures so far) into
// RunDir: the checkpoint, the best model's weights when that epoch made
// them, and the state file, each atomically.
func (t *Trainer) save(s *Summary, newBest bool) error {
	dir := t.RunDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := &checkpoint.Checkpoint{Config: t.cfg.Config, Model: t.m.Config(), Dataset: checkpoint.Fingerprint(t.ds),
		State: checkpoint.State{Epoch: t.epoch, BestEpoch: s.BestEpoch, BestValid: s.BestValid.AUC, TestAtBest: s.Test.AUC}}
	for _, p := range t.tensors() {
		c.Params = append(c.Params, checkpoint.ParamInfo{Name: p.name, Shape: p.shape})
		var d [3][]float32
		for k, b := range []backend.Buffer{p.w, p.m, p.v} {
			d[k] = make([]float32, b.Len())
			t.be.Read(d[k], b, 0)
		}
		c.Data = append(c.Data, d)
	}
	adamT := make([]int32, 1)
	t.be.Read(adamT, t.plan.Counts, t.plan.AdamT.Off)
	if err := t.be.Sync(); err != nil {
		return err
	}
	c.State.AdamT = adamT[0]
	if err := c.Save(filepath.Join(dir, LastFile)); err != nil {
		return err
	}
	if newBest {
		b := *c
		b.Data = make([][3][]float32, len(t.best))
		for i, w := range t.best {
			b.Data[i] = [3][]float32{w, make([]float32, len(w)), make([]float32, len(w))}
		}
		if err := b.Save(filepath.Join(dir, BestFile)); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(savedState{Config: t.cfg, Summary: s, SinceBest: t.sinceBest}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, StateFile), append(js, '\n'))
}

// Resume continues the run saved in RunDir: the tensors, the Adam step
// and the epochs trained from its last checkpoint, the best model from
// its best one, and the figures so far, so that the run goes on as if it
// had not stopped (the same bits). The settings must be the saved run's
// (Epochs may grow). Run and RunReplay then train the remaining epochs.
// Every rank of a group resumes from the same directory (RunGroup then
// leaves the saving to rank 0).
func (t *Trainer) Resume() error {
	dir := t.RunDir
	if dir == "" {
		return errors.New("link: resume needs a run directory")
	}
	st, err := readState(dir)
	if err != nil {
		return fmt.Errorf("link: resume: %w", err)
	}
	if was, now := settingsText(st.Config), settingsText(t.cfg); was != now {
		return fmt.Errorf("link: resume: %s was trained with other settings:\n  was %s\n  now %s", dir, was, now)
	}
	last, err := t.load(filepath.Join(dir, LastFile))
	if err != nil {
		return fmt.Errorf("link: resume: %w", err)
	}
	for i, p := range t.tensors() {
		for k, b := range []backend.Buffer{p.w, p.m, p.v} {
			t.be.Write(b, 0, last.Data[i][k])
		}
	}
	t.be.Write(t.plan.Counts, t.plan.AdamT.Off, []int32{last.State.AdamT})
	if st.Summary != nil && st.Summary.BestEpoch > 0 {
		best, err := checkpoint.Load(filepath.Join(dir, BestFile))
		if err != nil {
			return fmt.Errorf("link: resume: %w", err)
		}
		t.best = make([][]float32, len(best.Data))
		for i, d := range best.Data {
			t.best[i] = d[0]
		}
	}
	t.epoch, t.sinceBest, t.resumed = last.State.Epoch, st.SinceBest, st.Summary
	return t.be.Sync()
}

// settingsText is a run's settings as resuming compares them: all but
// the number of epochs.
func settingsText(c Config) string {
	c.Epochs = 0
	b, _ := json.Marshal(c)
	return string(b)
}

// ReadSettings reads the settings of the link run saved in dir.
func ReadSettings(dir string) (Config, error) {
	st, err := readState(dir)
	return st.Config, err
}

// readState reads StateFile in dir.
func readState(dir string) (savedState, error) {
	var st savedState
	js, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(js, &st); err != nil {
		return st, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return st, nil
}

// LoadWeights loads the weights of a link checkpoint (LastFile or
// BestFile) into the trainer's model and decoder, which must be the
// checkpoint's.
func (t *Trainer) LoadWeights(path string) error {
	c, err := t.load(path)
	if err != nil {
		return err
	}
	for i, p := range t.tensors() {
		t.be.Write(p.w, 0, c.Data[i][0])
	}
	return t.be.Sync()
}

// load reads a link checkpoint whose tensors are the trainer's.
func (t *Trainer) load(path string) (*checkpoint.Checkpoint, error) {
	c, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	ps := t.tensors()
	if len(c.Params) != len(ps) {
		return nil, fmt.Errorf("%s holds %d tensors, this model %d", path, len(c.Params), len(ps))
	}
	for i, p := range ps {
		if c.Params[i].Name != p.name || len(c.Data[i][0]) != p.w.Len() {
			return nil, fmt.Errorf("%s's tensor %d is %s of %d values, this model's %s of %d", path, i, c.Params[i].Name, len(c.Data[i][0]), p.name, p.w.Len())
		}
	}
	return c, nil
}
