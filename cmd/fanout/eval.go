package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/train"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	ckpt := fs.String("checkpoint", "", "checkpoint file (RUNDIR/best.ckpt or last.ckpt; required)")
	var src source
	fs.StringVar(&src.data, "data", "", "dataset directory (default: generate --preset in memory)")
	fs.StringVar(&src.preset, "preset", "tiny", "built-in preset when --data is not given")
	preds := fs.String("predictions", "", "write the predicted class of every vertex to this .npy file (int32); where the dataset keeps original ids (import edges), FILE.ids.npy or FILE.ids.txt beside each output lists its rows' ids")
	var outs evalOutputs
	fs.StringVar(&outs.embeddings, "embeddings", "", "write every vertex's last hidden layer (after its ReLU) to this .npy file (float32 [N, hidden]; layer-wise full-neighbour inference)")
	fs.StringVar(&outs.logits, "logits", "", "write every vertex's logits to this .npy file (float32 [N, classes]; layer-wise full-neighbour inference)")
	fs.StringVar(&outs.probabilities, "probabilities", "", "write every vertex's class probabilities (softmax of the logits) to this .npy file (float32 [N, classes])")
	device := fs.String("device", "auto", "auto, cpu, cuda or cuda:N")
	threads := fs.Int("threads", 0, "CPU worker threads (0 = all cores)")
	fullEval := fs.Bool("full-eval", false, "evaluate with all neighbours instead of the training fanouts")
	otherData := fs.Bool("allow-other-data", false, "evaluate on a dataset other than the checkpoint's (same feature width and classes)")
	var cf cudaFlags
	cf.add(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %s", quoted(pos[0]))
	}
	if *ckpt == "" {
		return errors.New("--checkpoint FILE is required")
	}
	if err := checkWritables("--predictions", *preds, "--embeddings", outs.embeddings, "--logits", outs.logits, "--probabilities", outs.probabilities); err != nil {
		return err
	}
	ck, err := checkpoint.Load(*ckpt)
	if err != nil {
		return err
	}
	ds, err := loadDataset(src, *threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	if err := checkData(*ckpt, ck, ds, *otherData, stderr); err != nil {
		return err
	}
	be, desc, err := openBackend(*device, *threads, cf, stderr)
	if err != nil {
		return err
	}
	defer closeBackend(be)
	cfg := ck.Config
	cfg.FullEval = cfg.FullEval || *fullEval
	tr, err := train.New(be, ds, cfg, train.Options{Device: desc})
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := tr.Restore(ck); err != nil {
		return fmt.Errorf("%s: %w", *ckpt, err)
	}
	for _, split := range []struct {
		name string
		ids  []int64
	}{{"valid", ds.Valid}, {"test", ds.Test}} {
		acc, loss, err := tr.Evaluate(split.ids)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s accuracy %.4f  loss %.4f  (%d vertices)\n", split.name, acc, loss, len(split.ids))
	}
	if outs.any() {
		if err := outs.write(tr, be, int(ds.Graph.NumNodes), stdout); err != nil {
			return err
		}
	}
	if *preds == "" {
		return keyByIDs(src.data, stdout, outs.embeddings, outs.logits, outs.probabilities)
	}
	all := make([]int64, ds.Graph.NumNodes)
	for i := range all {
		all[i] = int64(i)
	}
	p, err := tr.Predict(all)
	if err != nil {
		return err
	}
	if err := npy.WriteFile(*preds, p, []int64{int64(len(p))}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d predictions to %s\n", len(p), *preds)
	return keyByIDs(src.data, stdout, *preds, outs.embeddings, outs.logits, outs.probabilities)
}
