package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/train"
)

// fanout runs the command line in-process and returns its exit code, stdout
// and stderr.
func fanout(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// oneLineError requires a failing exit with a single error line naming want.
func oneLineError(t *testing.T, want string, args ...string) {
	t.Helper()
	code, _, stderr := fanout(t, args...)
	if code == 0 {
		t.Fatalf("%v: exit 0, want failure", args)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, want) || strings.Contains(stderr, "goroutine") {
		t.Fatalf("%v: stderr %q, want a line containing %q", args, stderr, want)
	}
}

func TestBadInputGivesOneLineErrors(t *testing.T) {
	oneLineError(t, "fanouts: 1 values", "train", "--fanouts", "10", "--device", "cpu")
	oneLineError(t, "--fanouts", "train", "--fanouts", "10,x", "--device", "cpu")
	oneLineError(t, "huge", "train", "--preset", "huge", "--device", "cpu")
	oneLineError(t, "huge", "gen", "huge", "--out", t.TempDir())
	oneLineError(t, "--device", "train", "--device", "tpu")
	oneLineError(t, "manifest.yaml", "info", t.TempDir())
	oneLineError(t, "--out", "gen", "tiny")
	oneLineError(t, "unknown format", "import", "csv", "x", "--out", t.TempDir())
	oneLineError(t, "--checkpoint", "eval", "--data", t.TempDir())
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("epochs: 2\ncolour: blue\n"), 0o644)
	oneLineError(t, "colour", "train", "--config", cfg, "--device", "cpu")
	if code, _, _ := fanout(t, "nonsense"); code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
}

func TestGenInfoTrainEvalRoundTrip(t *testing.T) {
	dir, data := t.TempDir(), genTiny(t)
	run := filepath.Join(dir, "run")
	code, out, stderr := fanout(t, "info", data)
	if code != 0 || !strings.Contains(out, "16,384") {
		t.Fatalf("info: exit %d\n%s%s", code, out, stderr)
	}
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("epochs: 2\nhidden: 32\n"), 0o644)
	code, out, stderr = fanout(t, "train", "--data", data, "--config", cfg, "--device", "cpu", "--out", run)
	if code != 0 || !strings.Contains(out, "test accuracy") {
		t.Fatalf("train: exit %d\n%s%s", code, out, stderr)
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, k := range []string{"task", "best_valid", "test", "epochs", "seconds", "device"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %s", k)
		}
	}
	if sum["epochs"].(float64) != 2 || sum["config"].(map[string]any)["hidden"].(float64) != 32 {
		t.Errorf("config file not applied: %v", sum)
	}
	preds := filepath.Join(dir, "p.npy")
	code, out, stderr = fanout(t, "eval", "--checkpoint", filepath.Join(run, "best.ckpt"), "--data", data, "--device", "cpu", "--predictions", preds)
	if code != 0 || !strings.Contains(out, "test accuracy") {
		t.Fatalf("eval: exit %d\n%s%s", code, out, stderr)
	}
	if st, err := os.Stat(preds); err != nil || st.Size() < 16384*4 {
		t.Fatalf("predictions: %v", err)
	}
	// The test accuracy eval reports equals the run's, for the best checkpoint.
	// eval prints four decimals, rounded (a truncated figure differs when
	// the fifth decimal is 5 or more).
	want := sum["test"].(map[string]any)["acc"].(float64)
	if !strings.Contains(out, fmt.Sprintf("test accuracy %.4f", want)) {
		t.Errorf("eval output %q does not show the run's test accuracy %v", out, want)
	}
}

// FuzzLoadConfig: any file gives a config or an error naming the file, and
// never a panic, whatever the values.
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte("epochs: 2\nhidden: 32\nfanouts: [10, 5]\n"))
	f.Add([]byte("model: gcn\nlayers: 2\nfanouts: \"-1,-1\"\nlr: 0.01\nweight-decay: 5e-4\ndata: x\ntf32: true\n"))
	f.Add([]byte("weight_decay: 5e-4\n"))
	f.Add([]byte("model: gat\nheads: 8\nout-heads: 1\nattn-dropout: 0.6\nhidden: 64\n"))
	f.Add([]byte("colour: blue\n"))
	f.Add([]byte("hidden: 16.9\nseed: &a 3\nepochs: *a\n"))
	f.Add([]byte("epochs: [\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := "c.yaml"
		fc, err := parseConfig(path, b)
		if err == nil {
			cfg := train.Defaults()
			var rf runFlags
			if err = fc.apply(fileOptions(), &cfg, &rf, nil); err == nil {
				cfg.Validate() // must not panic whatever the values
				rf.check()
				return
			}
		}
		if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("error %q does not name the file on one line", err)
		}
	})
}

// TestGATTrainEvalRoundTrip: GAT's settings come from flags and config keys
// alike, the checkpoint carries them, and eval rebuilds the model from it
// (the same test accuracy, layer-wise with --full-eval as in training).
func TestGATTrainEvalRoundTrip(t *testing.T) {
	dir, data := t.TempDir(), genTiny(t)
	run := filepath.Join(dir, "run")
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("model: gat\nheads: 4\nattn-dropout: 0.2\nepochs: 2\nfull-eval: true\n"), 0o644)
	code, out, stderr := fanout(t, "train", "--data", data, "--config", cfg, "--out-heads", "2", "--device", "cpu", "--out", run)
	if code != 0 || !strings.Contains(out, "test accuracy") {
		t.Fatalf("train: exit %d\n%s%s", code, out, stderr)
	}
	ck, err := train.LoadSaved(filepath.Join(run, "best.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if c := ck.Config; c.Model != "gat" || c.Heads != 4 || c.OutHeads != 2 || c.AttnDropout != 0.2 || !c.FullEval {
		t.Fatalf("checkpoint config %+v lacks the GAT settings", c)
	}
	if m := ck.Model; m.Heads != 4 || m.OutHeads != 2 || ck.File.Params[1].Name != "layer0.att_src" {
		t.Fatalf("checkpoint model %+v, parameters %v", m, ck.File.Params)
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	code, out, stderr = fanout(t, "eval", "--checkpoint", filepath.Join(run, "best.ckpt"), "--data", data, "--device", "cpu")
	if code != 0 || !strings.Contains(out, "test accuracy") {
		t.Fatalf("eval: exit %d\n%s%s", code, out, stderr)
	}
	if want := fmt.Sprintf("test accuracy %.4f", sum["test"].(map[string]any)["acc"].(float64)); !strings.Contains(out, want) {
		t.Errorf("eval output %q does not show the run's %s", out, want)
	}
	if code, _, stderr := fanout(t, "train", "--data", data, "--model", "sage", "--heads", "4", "--device", "cpu"); code == 0 || !strings.Contains(stderr, "heads") {
		t.Errorf("sage with --heads 4: exit %d, %q; want an error naming heads", code, stderr)
	}
}
