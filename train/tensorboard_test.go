package train

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/report/tensorboard"
)

// A run with Options.TensorBoard writes an event file that TensorBoard's
// format reader gives back: every epoch's figures as the summary has them,
// and the training loss every scalarWindow steps, the same points from the
// eager and the replay drivers (the replay driver's from the device's sums).
func TestTensorBoardScalars(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs, cfg.Batch = 2, 16
	steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	if steps < 2*scalarWindow {
		t.Fatalf("%d steps per epoch: the case needs two windows", steps)
	}
	points := map[bool]map[string][]tensorboard.Scalar{}
	for _, replay := range []bool{false, true} {
		dir := t.TempDir()
		be := cpu.New(2)
		opt := Options{TensorBoard: dir}
		if replay {
			opt.Mode = Replay
		}
		tr, err := New(record.New(be), ds, cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		runTrainer(t, tr, replay)
		tr.Close()
		files, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
		if len(files) != 1 {
			t.Fatalf("replay %v: event files %v", replay, files)
		}
		got, err := tensorboard.ReadScalars(files[0])
		if err != nil {
			t.Fatal(err)
		}
		byTag := map[string][]tensorboard.Scalar{}
		for _, s := range got {
			byTag[s.Tag] = append(byTag[s.Tag], s)
		}
		for _, tag := range []string{"epoch/loss", "epoch/train_acc", "epoch/seconds", "epoch/steps_per_s", "epoch/valid_acc"} {
			if len(byTag[tag]) != cfg.Epochs || byTag[tag][0].Step != 1 || byTag[tag][1].Step != 2 {
				t.Fatalf("replay %v: %s: %+v", replay, tag, byTag[tag])
			}
		}
		if want := cfg.Epochs * (steps / scalarWindow); len(byTag["train/loss"]) != want {
			t.Fatalf("replay %v: %d points of the training loss, want %d: %+v", replay, len(byTag["train/loss"]), want, byTag["train/loss"])
		}
		points[replay] = byTag
	}
	e, r := points[false]["train/loss"], points[true]["train/loss"]
	for i := range e {
		if e[i].Step != r[i].Step || math.Abs(float64(e[i].Value-r[i].Value)) > 1e-5*math.Abs(float64(e[i].Value)) {
			t.Fatalf("point %d: eager %+v, replay %+v", i, e[i], r[i])
		}
	}
	for i, s := range points[false]["epoch/loss"] {
		if math.Abs(float64(s.Value-points[true]["epoch/loss"][i].Value)) > 1e-5*float64(s.Value) {
			t.Fatalf("epoch %d loss: eager %v, replay %v", i+1, s.Value, points[true]["epoch/loss"][i].Value)
		}
	}
}
