package job

import (
	"errors"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/train"
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
	// Files to write ("" for none): the predicted classes, the last hidden
	// layer, the logits and the class probabilities of every vertex.
	Predictions, Embeddings, Logits, Probabilities string
	Log                                            io.Writer // notes (stderr)
	Out                                            io.Writer // the accuracies and the files written (stdout)
	Progress                                       func(title string) (update func(stage string, done, total int64), done func())
}

// RunEval evaluates the checkpoint on the validation and test splits and
// writes the files asked for (and, where the dataset keeps original ids,
// the ids of their rows beside them).
func RunEval(e Eval) error {
	if e.Checkpoint == "" {
		return errors.New("--checkpoint FILE is required")
	}
	ck, err := checkpoint.Load(e.Checkpoint)
	if err != nil {
		return err
	}
	ds, err := LoadDataset(e.Source, e.Threads, e.Log, e.Progress)
	if err != nil {
		return err
	}
	defer ds.Close()
	if err := checkData(e.Checkpoint, ck, ds, e.AllowOtherData, e.Log); err != nil {
		return err
	}
	be, desc, err := OpenBackend(e.Device, e.Threads, e.CUDA, e.Log)
	if err != nil {
		return err
	}
	defer CloseBackend(be)
	cfg := ck.Config
	cfg.FullEval = cfg.FullEval || e.FullEval
	tr, err := train.New(be, ds, cfg, train.Options{Device: desc})
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := tr.Restore(ck); err != nil {
		return fmt.Errorf("%s: %w", e.Checkpoint, err)
	}
	for _, split := range []struct {
		name string
		ids  []int64
	}{{"valid", ds.Valid}, {"test", ds.Test}} {
		acc, loss, err := tr.Evaluate(split.ids)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Out, "%s accuracy %.4f  loss %.4f  (%d vertices)\n", split.name, acc, loss, len(split.ids))
	}
	outs := evalOutputs{embeddings: e.Embeddings, logits: e.Logits, probabilities: e.Probabilities}
	if outs.any() {
		if err := outs.write(tr, be, int(ds.Graph.NumNodes), e.Out); err != nil {
			return err
		}
	}
	if e.Predictions == "" {
		return keyByIDs(e.Source.Data, e.Out, outs.embeddings, outs.logits, outs.probabilities)
	}
	all := make([]int64, ds.Graph.NumNodes)
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
	return keyByIDs(e.Source.Data, e.Out, e.Predictions, outs.embeddings, outs.logits, outs.probabilities)
}

// checkData checks that ds is the dataset the checkpoint at path was
// trained on (its fingerprint); with allow, a difference is only noted.
func checkData(path string, ck *checkpoint.Checkpoint, ds *dataset.Dataset, allow bool, log io.Writer) error {
	if note := checkpoint.OldFormatNote(path, ck); note != "" {
		fmt.Fprintln(log, note)
	}
	diff := ck.Dataset.Mismatch(checkpoint.Fingerprint(ds))
	switch {
	case diff == "":
		return nil
	case allow:
		fmt.Fprintf(log, "note: %s was trained on %s; %s differs (%s); evaluating anyway (--allow-other-data)\n", path, ck.Dataset.Name, ds.Name, diff)
		return nil
	}
	return fmt.Errorf("%s was trained on %s, and %s differs: %s; pass --allow-other-data to evaluate on it anyway", path, ck.Dataset.Name, ds.Name, diff)
}
