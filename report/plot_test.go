package report

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeRun(t *testing.T, lines ...string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkPNG decodes the picture and checks its size.
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

func TestPlotRun(t *testing.T) {
	dir := writeRun(t,
		`{"epoch":1,"loss":1.9,"train_acc":0.2,"valid_acc":0.3,"valid_loss":1.8}`,
		`{"epoch":2,"loss":1.5,"train_acc":0.5}`,
		`{"epoch":3,"loss":1.1,"train_acc":0.7,"valid_acc":0.6,"valid_loss":1.2}`)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"test_acc":0.61,"best_epoch":3,"dataset":"cora","config":{"model":"gcn"}}`), 0o644)
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Epochs) != 3 || r.Epochs[1].ValidAcc != nil || r.TestAcc != 0.61 || r.Name != "gcn on cora" {
		t.Fatalf("read %+v", r)
	}
	out := filepath.Join(dir, "c.png")
	if err := PlotRun(r, out); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, out, 768, 768)
}

// TestReadRunNested: today's metrics.jsonl and summary.json, the task's
// figures nested (a link run's: its primary figure ROC-AUC), read as the
// earlier flat ones are.
func TestReadRunNested(t *testing.T) {
	dir := writeRun(t,
		`{"epoch":1,"loss":0.6,"train_acc":0.6,"valid":{"auc":0.7,"ap":0.6,"loss":0.5}}`,
		`{"epoch":2,"loss":0.5,"train_acc":0.7}`)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"task":"link","primary":"auc","test":{"auc":0.72},"best_epoch":1,"dataset":"ring","config":{"model":"sage"}}`), 0o644)
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Epochs[0].ValidAcc == nil || *r.Epochs[0].ValidAcc != 0.7 || *r.Epochs[0].ValidLoss != 0.5 || r.Epochs[1].ValidAcc != nil || r.TestAcc != 0.72 || r.Primary != "auc" {
		t.Fatalf("read %+v", r)
	}
}

// TestPlotValidationsWithin: a run's validations within epochs fall
// between its epochs on the axis, its best model's too.
func TestPlotValidationsWithin(t *testing.T) {
	dir := writeRun(t,
		`{"epoch":1,"steps":10,"step":5,"loss":1.9,"train_acc":0.2,"valid":{"acc":0.5,"loss":1.5}}`,
		`{"epoch":1,"steps":10,"step":10,"loss":1.7,"train_acc":0.3,"valid":{"acc":0.4,"loss":1.6}}`,
		`{"epoch":2,"steps":10,"step":5,"loss":1.5,"train_acc":0.4,"valid":{"acc":0.45,"loss":1.4}}`)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"primary":"acc","test":{"acc":0.5},"best_epoch":1,"best_step":5,"dataset":"tiny","config":{"model":"sage"}}`), 0o644)
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var at []float64
	for _, e := range r.Epochs {
		at = append(at, e.At())
	}
	if !slices.Equal(at, []float64{0.5, 1, 1.5}) || r.BestAt() != 0.5 {
		t.Fatalf("lines at %v, the best at %v; want [0.5 1 1.5] and 0.5", at, r.BestAt())
	}
	if err := PlotRun(r, filepath.Join(dir, "c.png")); err != nil {
		t.Fatal(err)
	}
}

func TestReadRunErrors(t *testing.T) {
	if _, err := ReadRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "run directory") {
		t.Errorf("no metrics: %v", err)
	}
	if _, err := ReadRun(writeRun(t, `{"epoch":1,`)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad line: %v", err)
	}
}

func TestPlotSplit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.png")
	err := PlotSplit("tiny", []Split{{Label: "eager", Sample: 3e-4, Gather: 1e-4, Train: 1e-3, Idle: 1e-5, Step: 1.5e-3}, {Label: "replay", Step: 1.2e-3}}, out)
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, out, 768, 384)
	if err := PlotSplit("none", nil, out); err == nil {
		t.Error("no splits: no error")
	}
}

// FuzzReadRun: any metrics.jsonl gives a run or an error, never a panic.
func FuzzReadRun(f *testing.F) {
	f.Add([]byte(`{"epoch":1,"loss":1.9,"train_acc":0.2,"valid_acc":0.3,"valid_loss":1.8}` + "\n"))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "metrics.jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		ReadRun(dir)
	})
}
