package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/job"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	e := job.Eval{Log: stderr, Out: stdout, Progress: bars(stderr)}
	fs.StringVar(&e.Checkpoint, "checkpoint", "", "checkpoint file (RUNDIR/best.ckpt or last.ckpt; required)")
	fs.StringVar(&e.Predictions, "predictions", "", "write the predicted class of every vertex to this .npy file (int32); where the dataset keeps original ids (import edges), FILE.ids.npy or FILE.ids.txt beside each output lists its rows' ids")
	fs.StringVar(&e.Embeddings, "embeddings", "", "write every vertex's embedding to this .npy file: a node classifier's last hidden layer (after its ReLU; float32 [N, hidden]; layer-wise full-neighbour inference), a link predictor's output (float32 [N, embed])")
	fs.StringVar(&e.Logits, "logits", "", "write every vertex's logits to this .npy file (float32 [N, classes]; layer-wise full-neighbour inference)")
	fs.StringVar(&e.Probabilities, "probabilities", "", "write every vertex's class probabilities (softmax of the logits) to this .npy file (float32 [N, classes])")
	fs.StringVar(&e.Scores, "scores", "", "a link run's checkpoint: score the vertex pairs of this .npy file (int32 or int64 [pairs, 2]) into PAIRS.scores.npy (float32 [pairs])")
	fs.BoolVar(&e.Force, "force", false, "replace output files that exist (without it an existing file is an error)")
	fs.BoolVar(&e.AllowOtherData, "allow-other-data", false, "evaluate on a dataset other than the checkpoint's (same feature width and classes)")
	// The settings eval shares with train come from train's table.
	rf := runFlags{j: job.Job{Source: job.Source{Preset: "tiny"}, Device: "auto", CUDA: cudaDefaults()}}
	var given train.Config
	registerNamed(fs, append(runOptions(), hyperOptions()...), &given, &rf, "data", "preset", "device", "threads", "full-eval",
		"cuda-lib-dir", "kernel-cache", "tf32", "tf32x3", "deterministic")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %s", quoted(pos[0]))
	}
	if e.Checkpoint != "" {
		if err := checkWritables("--predictions", e.Predictions, "--embeddings", e.Embeddings, "--logits", e.Logits, "--probabilities", e.Probabilities); err != nil {
			return err
		}
	}
	e.Source, e.Device, e.Threads, e.CUDA, e.FullEval = rf.j.Source, rf.j.Device, rf.j.Threads, rf.j.CUDA, given.FullEval
	return job.RunEval(ctx, e)
}
