package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/export"
)

// TestEvalOutputs: eval writes the embeddings [N, hidden], the logits and
// the probabilities [N, classes]; the probabilities are the softmax of the
// logits, and with --full-eval the predictions are the logits' argmax.
func TestEvalOutputs(t *testing.T) {
	dir, data := t.TempDir(), genTiny(t)
	run := quickRun(t, "--data", data)
	e, l, p, pr := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy"), filepath.Join(dir, "p.npy"), filepath.Join(dir, "pred.npy")
	code, out, stderr := fanout(t, "eval", "--checkpoint", filepath.Join(run, checkpoint.BestCheckpoint), "--data", data, "--device", "cpu",
		"--full-eval", "--embeddings", e, "--logits", l, "--probabilities", p, "--predictions", pr)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	read := func(path string) ([]float32, []int64) {
		d, shape, err := npy.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return d.([]float32), shape
	}
	emb, es := read(e)
	logits, ls := read(l)
	probs, ps := read(p)
	const n, hidden, classes = 16384, 8, 8 // quick trains hidden 8
	if !slices.Equal(es, []int64{n, hidden}) || !slices.Equal(ls, []int64{n, classes}) || !slices.Equal(ps, []int64{n, classes}) {
		t.Fatalf("shapes: embeddings %v, logits %v, probabilities %v", es, ls, ps)
	}
	if slices.Min(emb) < 0 {
		t.Errorf("embeddings after a ReLU hold a negative value")
	}
	predAny, _, err := npy.ReadFile(pr)
	if err != nil {
		t.Fatal(err)
	}
	pred := predAny.([]int32)
	for v := 0; v < n; v++ {
		row, prow := logits[v*classes:(v+1)*classes], probs[v*classes:(v+1)*classes]
		var sum float64
		for _, q := range prow {
			sum += float64(q)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Fatalf("vertex %d: probabilities sum to %v", v, sum)
		}
		am := 0
		for c := range row {
			if row[c] > row[am] {
				am = c
			}
		}
		if int32(am) != pred[v] {
			t.Fatalf("vertex %d: logits' argmax %d, prediction %d", v, am, pred[v])
		}
		if pm := slices.Index(prow, slices.Max(prow)); pm != am {
			t.Fatalf("vertex %d: probabilities' argmax %d, logits' %d", v, pm, am)
		}
	}
}

// TestExport: export writes a safetensors file of PyG's names from a
// trained checkpoint and refuses a missing output or an unknown format.
func TestExport(t *testing.T) {
	run := quickRun(t)
	out := filepath.Join(t.TempDir(), "m.safetensors")
	ckpt := filepath.Join(run, checkpoint.BestCheckpoint)
	if code, stdout, stderr := fanout(t, "export", "--checkpoint", ckpt, out); code != 0 || !strings.Contains(stdout, "torch_geometric.nn.models.GraphSAGE") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	ts, _, err := export.ReadSafetensors(out)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := ts["convs.0.lin_l.weight"]; !ok || !slices.Equal(w.Shape, []int{8, 32}) {
		t.Fatalf("convs.0.lin_l.weight: %v", w.Shape)
	}
	oneLineError(t, "want one output file", "export", "--checkpoint", ckpt)
	oneLineError(t, "format", "export", "--checkpoint", ckpt, "--format", "onnx", out)
}

// TestPlotCommands: plot draws a trained run, bench --plot its split.
func TestPlotCommands(t *testing.T) {
	dir, run := t.TempDir(), quickRun(t, "--epochs", "2")
	if code, out, stderr := fanout(t, "plot", run); code != 0 || !strings.Contains(out, "curves.png (2 epochs)") {
		t.Fatalf("plot: exit %d %s%s", code, out, stderr)
	}
	png := filepath.Join(dir, "split.png")
	if code, out, stderr := fanout(t, "bench", "--preset", "tiny", "--device", "cpu", "--steps", "2", "--warmup", "1", "--plot", png); code != 0 {
		t.Fatalf("bench --plot: exit %d %s%s", code, out, stderr)
	}
	if _, err := os.Stat(png); err != nil {
		t.Fatal(err)
	}
	oneLineError(t, "want one run directory", "plot")
}
