package link

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// TestResumeContinuesBitwise: a run saved after 2 epochs and resumed to 4
// (under another driver) gives the 4-epoch run's losses, metrics and
// tensors bit for bit; other settings are refused, naming them.
func TestResumeContinuesBitwise(t *testing.T) {
	ds, cfg, dir, straight, _ := halfRun(t)
	checkResumed(t, cfg, dir, straight)

	other := cfg
	other.Link.Negatives = 3
	tr := newTrainer(t, cpu.New(1), ds, other, train.Options{RunDir: dir, Resume: true})
	if _, err := tr.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "link.negatives 3 (was 2)") {
		t.Errorf("resume with other negatives: %v", err)
	}
}

// halfRun trains ringConfig for 4 epochs straight, and for 2 into a run
// directory.
func halfRun(t *testing.T) (*dataset.Dataset, train.Config, string, result, result) {
	ds := ringData(t, 300)
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery = 4, 1
	straight := trainLink(t, cpu.New(2), ds, cfg, train.Eager, train.Options{})
	dir := filepath.Join(t.TempDir(), "run")
	half := cfg
	half.Epochs = 2
	first := trainLink(t, cpu.New(2), ds, half, train.Eager, train.Options{RunDir: dir})
	return ds, cfg, dir, straight, first
}

// checkResumed resumes the run in dir to cfg's epochs with the replay
// driver and checks it against the straight run.
func checkResumed(t *testing.T, cfg train.Config, dir string, straight result) {
	t.Helper()
	r := trainLink(t, record.New(cpu.New(2)), ringData(t, 300), cfg, train.Replay, train.Options{RunDir: dir, Resume: true})
	if r.sum.Epochs != 4 || len(r.epochs) != 2 {
		t.Fatalf("%d epochs after the resume, %d trained by it; want 4 and 2", r.sum.Epochs, len(r.epochs))
	}
	// The straight run is eager (its epoch losses added on the host in
	// float64), the resumed one replayed: their steps agree bit for bit.
	if n := len(r.steps); n == 0 || !slices.Equal(r.steps, straight.steps[len(straight.steps)-n:]) {
		t.Errorf("the resumed run's step losses differ from the straight run's last %d:\n%v\n%v", n, r.steps, straight.steps[len(straight.steps)-n:])
	}
	for e, st := range r.epochs {
		if want := straight.epochs[e+2].Loss; !(math.Abs(st.Loss-want) <= 1e-6*want) {
			t.Errorf("epoch %d: loss %v, straight run %v", st.Epoch, st.Loss, want)
		}
	}
	if r.sum.BestEpoch != straight.sum.BestEpoch || r.sum.Test[MetricAUC] != straight.sum.Test[MetricAUC] {
		t.Errorf("best epoch %d test %v, straight run %d %v", r.sum.BestEpoch, r.sum.Test[MetricAUC], straight.sum.BestEpoch, straight.sum.Test[MetricAUC])
	}
	for i, p := range r.params {
		if !slices.Equal(p, straight.params[i]) {
			t.Fatalf("tensor %d differs from the straight run's", i)
		}
	}
}

// TestLegacyRunResumes: a run directory in the layout of earlier versions
// (link_last.ckpt, link_best.ckpt and link_state.json, the settings under
// their Go names beside the trainer's) resumes: it is moved to today's
// layout and continues as the straight run, bit for bit.
func TestLegacyRunResumes(t *testing.T) {
	_, cfg, dir, straight, first := halfRun(t)
	half := cfg
	half.Epochs = 2
	writeLegacy(t, dir, half, first)
	if !HasLegacyRun(dir) || !IsLegacyCheckpoint(filepath.Join(dir, legacyBest)) {
		t.Fatal("the legacy layout is not recognised")
	}
	s, err := LoadLegacy(filepath.Join(dir, legacyBest))
	if err != nil || s.Config.Link != half.Link || s.Config.TaskName() != train.TaskLink {
		t.Fatalf("legacy best checkpoint's settings %+v, %v; want %+v", s.Config.Link, err, half.Link)
	}
	if err := MigrateRun(dir); err != nil {
		t.Fatal(err)
	}
	if HasLegacyRun(dir) {
		t.Error("the legacy files stayed after the migration")
	}
	checkResumed(t, cfg, dir, straight)
}

// writeLegacy turns the run in dir into the layout of earlier versions.
func writeLegacy(t *testing.T, dir string, cfg train.Config, r result) {
	t.Helper()
	base, err := json.Marshal(func() train.Config { c := cfg; c.Task, c.Link, c.EpochSteps = "", train.LinkConfig{}, 0; return c }())
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	json.Unmarshal(base, &conf)
	l := cfg.Link
	for k, v := range map[string]any{"Embed": l.Embed, "Negatives": l.Negatives, "NegativeDist": l.NegativeDist, "Decoder": l.Decoder,
		"DecoderWidth": l.DecoderWidth, "Exclude": l.Exclude, "EvalNegatives": l.EvalNegatives, "EvalEdges": l.EvalEdges, "EpochSteps": 0, "Features": 0} {
		conf[k] = v
	}
	metrics := func(m train.Metrics) map[string]any {
		return map[string]any{"auc": m[MetricAUC], "ap": m[MetricAP], "mrr": m[MetricMRR], "hits": []float64{m["hits@20"], m["hits@50"], m["hits@100"]}}
	}
	var epochs []map[string]any
	for _, e := range r.epochs {
		epochs = append(epochs, map[string]any{"epoch": e.Epoch, "steps": e.Steps, "loss": e.Loss, "train_acc": e.TrainAcc, "valid": metrics(e.Valid), "seconds": e.Seconds})
	}
	state := map[string]any{"config": conf, "evals_since_best": 0,
		"summary": map[string]any{"epochs": epochs, "best_epoch": r.sum.BestEpoch, "best_valid": metrics(r.sum.BestValid), "test": metrics(r.sum.Test)}}
	js, _ := json.Marshal(state)
	if err := os.WriteFile(filepath.Join(dir, legacyState), js, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ from, to string }{{checkpoint.LastCheckpoint, legacyLast}, {checkpoint.BestCheckpoint, legacyBest}} {
		c, err := checkpoint.Load(filepath.Join(dir, f.from))
		if err != nil {
			t.Fatal(err)
		}
		c.Config, c.State.BestMetrics, c.State.TestMetrics = base, nil, nil
		if err := c.Save(filepath.Join(dir, f.to)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{checkpoint.LastCheckpoint, checkpoint.BestCheckpoint, checkpoint.MetricsFile, checkpoint.SummaryFile} {
		os.Remove(filepath.Join(dir, f))
	}
}
