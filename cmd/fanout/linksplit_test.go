package main

import (
	"encoding/json"
	"github.com/fanout-gnn/fanout/checkpoint"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/train/job"
)

// TestGenLinkSplit: gen --link-split stores a link task that Open
// validates and info shows; a bad split is refused before any work.
func TestGenLinkSplit(t *testing.T) {
	dir := genTiny(t, "--link-split", "0.8,0.1,0.1", "--link-negatives", "3", "--link-seed", "4")
	ds := openData(t, dir)
	l := ds.Link
	if l == nil || l.Negatives != 3 || dataset.Pairs(l.TestNeg) != 3*dataset.Pairs(l.Test) || dataset.Pairs(l.Valid) == 0 {
		t.Fatalf("link task %+v", l)
	}
	code, out, stderr := fanout(t, "info", dir)
	if code != 0 || !strings.Contains(out, "links      train ") || !strings.Contains(out, "3 fixed negatives") {
		t.Errorf("info: exit %d\n%s%s", code, out, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	oneLineError(t, "sum to", "gen", "tiny", "--out", bad, "--link-split", "0.8,0.1,0.2")
	oneLineError(t, "--link-negatives 0", "gen", "tiny", "--out", bad, "--link-split", "0.8,0.1,0.1", "--link-negatives", "0")
}

// TestTrainLinkTask: import --link-split, then train --task link (eager
// and replay) writes the run's files (the trainer's layout, as for every
// task, and the encoder, the decoder and the scores) and prints the test
// metrics; eval gives the run's outputs again; a run is not overwritten
// and resumes; bench measures the link step; a dataset without a link
// task and an unknown task are refused.
func TestTrainLinkTask(t *testing.T) {
	dir := t.TempDir()
	src, data := filepath.Join(dir, "ring.npz"), filepath.Join(dir, "ring")
	ringNPZ(t, src, 0.5)
	if code, out, stderr := fanout(t, "import", "npz", src, "--out", data, "--train-per-class", "5", "--valid", "10", "--test", "20",
		"--link-split", "0.7,0.15,0.15", "--link-negatives", "4"); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, stderr)
	}
	pairs := filepath.Join(dir, "pairs.npy")
	if err := npy.WriteFile(pairs, []int64{0, 1, 5, 9, 59, 2}, []int64{3, 2}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"eager", "replay"} {
		run, emb := filepath.Join(dir, "run-"+mode), filepath.Join(dir, mode+"-emb.npy")
		code, out, stderr := fanout(t, "train", "--data", data, "--task", "link", "--device", "cpu", "--mode", mode, "--epochs", "2",
			"--batch", "16", "--fanouts", "3,3", "--hidden", "8", "--decoder", "mlp", "--negatives", "2", "--out", run,
			"--embeddings", emb, "--scores", pairs)
		if code != 0 || !strings.Contains(out, "test ROC-AUC ") || !strings.Contains(stderr, "epoch 2/2 ") || !strings.Contains(stderr, "wrote scores [3] to ") {
			t.Fatalf("train --task link --mode %s: exit %d\n%s%s", mode, code, out, stderr)
		}
		for _, f := range []string{checkpoint.SummaryFile, checkpoint.BestCheckpoint, checkpoint.LastCheckpoint, job.EncoderFile, job.DecoderFile} {
			if _, err := os.Stat(filepath.Join(run, f)); err != nil {
				t.Errorf("mode %s: %v", mode, err)
			}
		}
		if _, shape, err := npy.ReadFile(emb); err != nil || len(shape) != 2 || shape[0] != 60 || shape[1] != 8 {
			t.Errorf("mode %s: embeddings of shape %v: %v", mode, shape, err)
		}
		if scores, shape, err := npy.ReadFile(filepath.Join(run, job.ScoresFile)); err != nil || len(shape) != 1 || shape[0] != 3 {
			t.Errorf("mode %s: scores %v of shape %v: %v", mode, scores, shape, err)
		}
	}
	// eval of the run's best checkpoint gives the run's embeddings and
	// scores again, bit for bit.
	best := filepath.Join(dir, "run-eager", checkpoint.BestCheckpoint)
	emb2 := filepath.Join(dir, "eval-emb.npy")
	if code, out, stderr := fanout(t, "eval", "--checkpoint", best, "--data", data, "--device", "cpu", "--embeddings", emb2, "--scores", pairs); code != 0 ||
		!strings.Contains(out, "test ROC-AUC ") || !strings.Contains(out, "wrote embeddings [60 8] to "+emb2) || !strings.Contains(out, "wrote scores [3] to ") {
		t.Fatalf("eval of a link run: exit %d\n%s%s", code, out, stderr)
	}
	for _, f := range [][2]string{{emb2, filepath.Join(dir, "eager-emb.npy")}, {job.ScoresPath(pairs), filepath.Join(dir, "run-eager", job.ScoresFile)}} {
		a, _, errA := npy.ReadFile(f[0])
		b, _, errB := npy.ReadFile(f[1])
		if errA != nil || errB != nil || !slices.Equal(a.([]float32), b.([]float32)) {
			t.Errorf("eval's %s differs from the run's %s (%v, %v)", f[0], f[1], errA, errB)
		}
	}
	oneLineError(t, "is a link checkpoint, which has no predictions", "eval", "--checkpoint", best, "--data", data, "--device", "cpu", "--predictions", filepath.Join(dir, "p.npy"))
	oneLineError(t, "embeddings: "+emb2+" exists; give --force", "eval", "--checkpoint", best, "--data", data, "--device", "cpu", "--embeddings", emb2)
	oneLineError(t, "give --out", "train", "--data", data, "--task", "link", "--device", "cpu", "--scores", pairs)
	again := []string{"train", "--data", data, "--task", "link", "--device", "cpu", "--epochs", "3", "--batch", "16", "--fanouts", "3,3",
		"--hidden", "8", "--decoder", "mlp", "--negatives", "2", "--out", filepath.Join(dir, "run-eager")}
	oneLineError(t, "already holds a run", again...)
	if code, out, stderr := fanout(t, append(again, "--resume")...); code != 0 || !strings.Contains(stderr, "epoch 3/3 ") || strings.Contains(stderr, "epoch 1/3 ") {
		t.Errorf("train --task link --resume: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := fanout(t, "bench", "--data", data, "--task", "link", "--device", "cpu", "--mode", "both", "--json",
		"--steps", "2", "--warmup", "1", "--batch", "8", "--fanouts", "3,3", "--hidden", "8")
	if code != 0 || strings.Count(out, `"step_s":`) != 2 || !strings.Contains(out, `"mode":"replay"`) {
		t.Errorf("bench --task link: exit %d\n%s%s", code, out, stderr)
	}
	plain := genTiny(t)
	oneLineError(t, "no link task", "train", "--data", plain, "--task", "link", "--device", "cpu", "--epochs", "1")
	oneLineError(t, `task: "edge", want node or link`, "train", "--data", data, "--task", "edge", "--device", "cpu")
}

// TestTrainLinkMRR: gen tiny --link-split, then train --task link with
// --eval-negatives 1000 ranks each of --eval-edges held-out edges against
// 1,000 negatives in epochs of --epoch-steps steps: the summary's epochs
// have those steps and its test MRR is a reciprocal rank's mean, which
// the printed line shows; bad values are refused naming the flag.
func TestTrainLinkMRR(t *testing.T) {
	data := genTiny(t, "--link-split", "0.85,0.05,0.1")
	run := filepath.Join(t.TempDir(), "run")
	code, out, stderr := fanout(t, "train", "--data", data, "--task", "link", "--device", "cpu", "--model", "gcn", "--epochs", "2",
		"--epoch-steps", "4", "--eval-negatives", "1000", "--eval-edges", "40", "--fanouts", "5,5", "--hidden", "16", "--out", run)
	if code != 0 || !strings.Contains(out, ", MRR ") || !strings.Contains(stderr, "epoch 2/2 ") {
		t.Fatalf("train --task link --eval-negatives 1000: exit %d\n%s%s", code, out, stderr)
	}
	b, err := os.ReadFile(filepath.Join(run, checkpoint.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Test struct{ MRR float64 }
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if !(s.Test.MRR >= 1.0/1001 && s.Test.MRR <= 1) {
		t.Errorf("test MRR %v: a reciprocal rank among 1,001 lies in [1/1001, 1]", s.Test.MRR)
	}
	lines, err := os.ReadFile(filepath.Join(run, checkpoint.MetricsFile))
	if err != nil || strings.Count(string(lines), `"steps":4,`) != 2 {
		t.Errorf("metrics.jsonl: %s, %v; want 2 epochs of 4 steps", lines, err)
	}
	for _, bad := range [][]string{{"--eval-negatives", "-1"}, {"--eval-edges", "-2"}, {"--epoch-steps", "-3"}} {
		oneLineError(t, strings.TrimPrefix(bad[0], "--"), append([]string{"train", "--data", data, "--task", "link", "--device", "cpu"}, bad...)...)
	}
}

// TestNegativesRefusedByFlag: negatives a step cannot form are one line
// naming the flag, before any work.
func TestNegativesRefusedByFlag(t *testing.T) {
	oneLineError(t, "negatives: 64 in-batch negatives, but a step of 64 edges has 63 other destinations",
		"train", "--device", "cpu", "--task", "link", "--negative-dist", "in-batch", "--negatives", "64", "--batch", "64")
	oneLineError(t, "negative-sharing: batch, but in-batch negatives",
		"train", "--device", "cpu", "--task", "link", "--negative-dist", "in-batch", "--negative-sharing", "batch")
	oneLineError(t, `negative-sharing: "all", want none or batch`, "train", "--device", "cpu", "--task", "link", "--negative-sharing", "all")
	oneLineError(t, "negative-sharing: a link prediction setting, but the task is node", "train", "--device", "cpu", "--negative-sharing", "batch")
}
