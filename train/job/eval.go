package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/link"
)

// Eval is an evaluation job: a checkpoint on a dataset, and what to write
// of every vertex.
type Eval struct {
	Checkpoint string // the checkpoint file
	Source     Source
	Device     string
	Threads    int
	CUDA       CUDA
	FullEval   bool // evaluate with all neighbours, whatever the checkpoint says
	// AllowOtherData evaluates on a dataset other than the checkpoint's
	// (same feature width and classes), with a note.
	AllowOtherData bool
	// Files to write ("" for none): of a node classifier, the predicted
	// classes, the logits and the class probabilities of every vertex; of
	// either task, the embeddings (a node classifier's last hidden layer,
	// a link predictor's output); of a link predictor, the scores of the
	// pairs in Scores, written to ScoresPath(Scores).
	Predictions, Embeddings, Logits, Probabilities, Scores string
	// Force replaces output files that exist (refused otherwise).
	Force    bool
	Log      io.Writer // notes (stderr)
	Out      io.Writer // the figures and the files written (stdout)
	Progress func(title string) (update func(stage string, done, total int64), done func())
}

// ScoresPath is where eval writes the scores of the pairs in path:
// PAIRS.npy's scores go to PAIRS.scores.npy.
func ScoresPath(path string) string {
	return strings.TrimSuffix(path, ".npy") + ".scores.npy"
}

// RunEval evaluates the checkpoint on the validation and test splits with
// the task it was trained for and writes the files asked for (and, where
// the dataset keeps original ids, the ids of their rows beside them).
func RunEval(ctx context.Context, e Eval) error {
	if e.Checkpoint == "" {
		return errors.New("--checkpoint FILE is required")
	}
	s, err := loadCheckpoint(e.Checkpoint)
	if err != nil {
		return err
	}
	if err := e.checkOutputs(s.Config.TaskName()); err != nil {
		return err
	}
	if s.Config.TypedModel() && e.Embeddings != "" && !e.Force {
		var types []string // a typed model writes one file per type
		for _, ty := range s.Model.Types {
			types = append(types, ty.Name)
		}
		if err := typedEmbeddingsThere(e.Embeddings, types); err != nil {
			return err
		}
	}
	ds, err := LoadDataset(e.Source, e.Threads, e.Log, e.Progress)
	if err != nil {
		return err
	}
	defer ds.Close()
	if err := checkData(e.Checkpoint, s.File, ds, e.AllowOtherData, e.Log); err != nil {
		return err
	}
	be, desc, err := OpenBackend(e.Device, e.Threads, e.CUDA, e.Log)
	if err != nil {
		return err
	}
	defer CloseBackend(be)
	cfg := s.Config
	cfg.FullEval = cfg.FullEval || e.FullEval
	task, err := NewTask(cfg)
	if err != nil {
		return err
	}
	tr, err := train.New(be, ds, cfg, train.Options{Device: desc, Task: task})
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := tr.Restore(s.File); err != nil {
		return fmt.Errorf("%s: %w", e.Checkpoint, err)
	}
	h := tr.Head()
	for _, split := range []train.Split{train.Valid, train.Test} {
		m, err := h.Evaluate(ctx, split)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Out, "%s %s\n", split, m.Text(h.MetricKeys()))
	}
	return e.write(tr, int64(tr.OutputRows()))
}

// write writes eval's outputs of trainer tr (n vertices) and keys them by
// the dataset's original ids.
func (e Eval) write(tr *train.Trainer, n int64) error {
	w := outputWriter{log: e.Out, write: true, data: e.Source.Data}
	if tr.Config().TaskName() == train.TaskLink {
		scores := ""
		if e.Scores != "" {
			scores = ScoresPath(e.Scores)
		}
		if err := w.linkOutputs(tr, e.Embeddings, e.Scores, scores); err != nil {
			return err
		}
		return keyByIDs(e.Source.Data, e.Out, e.Embeddings)
	}
	if err := w.nodeEmbeddings(tr, e.Embeddings); err != nil {
		return err
	}
	if err := w.nodeLogits(tr, e.Logits, e.Probabilities); err != nil {
		return err
	}
	if e.Predictions != "" {
		all := make([]int64, n)
		for i := range all {
			all[i] = int64(i)
		}
		p, err := tr.Predict(all)
		if err != nil {
			return err
		}
		if err := npy.WriteFile(e.Predictions, p, []int64{int64(len(p))}); err != nil {
			return err
		}
		fmt.Fprintf(e.Out, "wrote %d predictions to %s\n", len(p), e.Predictions)
	}
	emb := e.Embeddings
	if tr.Model().Config().Typed() {
		emb = "" // per type, keyed as written
	}
	return keyByIDs(e.Source.Data, e.Out, e.Predictions, emb, e.Logits, e.Probabilities)
}

// checkOutputs refuses, before any work, outputs the checkpoint's task
// does not have, and files that exist (without Force).
func (e Eval) checkOutputs(task string) error {
	isLink := task == train.TaskLink
	for _, o := range []struct {
		flag, path string
		ok         bool
	}{
		{"predictions", e.Predictions, !isLink}, {"logits", e.Logits, !isLink}, {"probabilities", e.Probabilities, !isLink},
		{"embeddings", e.Embeddings, true}, {"scores", e.Scores, isLink},
	} {
		if o.path == "" {
			continue
		}
		if !o.ok {
			return fmt.Errorf("%s: %s is a %s checkpoint, which has no %s", o.flag, e.Checkpoint, task, o.flag)
		}
		if e.Force || o.flag == "scores" {
			continue
		}
		if err := notThere(o.flag, o.path); err != nil {
			return err
		}
	}
	if e.Scores != "" && !e.Force {
		return notThere("scores", ScoresPath(e.Scores))
	}
	return nil
}

// loadCheckpoint reads a checkpoint for eval: today's, or a link run's of
// an earlier version (its settings beside it in link_state.json).
func loadCheckpoint(path string) (*train.Saved, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("checkpoint: %s is a directory; give a checkpoint file in it (best.ckpt or last.ckpt)", path)
	}
	if link.IsLegacyCheckpoint(path) {
		return link.LoadLegacy(path)
	}
	return train.LoadSaved(path)
}

// checkData checks that ds is the dataset the checkpoint at path was
// trained on (its fingerprint); with allow, a difference is only noted.
func checkData(path string, ck *checkpoint.Checkpoint, ds *dataset.Dataset, allow bool, log io.Writer) error {
	if note := checkpoint.OldFormatNote(path, ck); note != "" {
		fmt.Fprintln(log, note)
	}
	diff := ck.Dataset.Mismatch(train.Fingerprint(ds))
	switch {
	case diff == "":
		return nil
	case allow:
		fmt.Fprintf(log, "note: %s was trained on %s; %s differs (%s); evaluating anyway (--allow-other-data)\n", path, ck.Dataset.Name, ds.Name, diff)
		return nil
	}
	return fmt.Errorf("%s was trained on %s, and %s differs: %s; pass --allow-other-data to evaluate on it anyway", path, ck.Dataset.Name, ds.Name, diff)
}

// readPairs reads a .npy of vertex pairs, int32 or int64 [pairs, 2].
func readPairs(path string) ([]int32, error) {
	data, shape, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scores: %w", err)
	}
	if len(shape) != 2 || shape[1] != 2 {
		return nil, fmt.Errorf("scores: %s: shape %v, want [pairs, 2]", path, shape)
	}
	switch p := data.(type) {
	case []int32:
		return p, nil
	case []int64:
		out := make([]int32, len(p))
		for i, v := range p {
			if int64(int32(v)) != v {
				return nil, fmt.Errorf("scores: %s: pair %d has vertex %d, beyond int32", path, i/2, v)
			}
			out[i] = int32(v)
		}
		return out, nil
	}
	descr, _ := npy.Descr(data)
	return nil, fmt.Errorf("scores: %s: dtype %s, want int32 or int64", path, descr)
}
