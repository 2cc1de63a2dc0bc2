package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/train"
)

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigKeysAreFlagNames: every config key is a flag of train, and
// README's example config file loads and sets what it says.
func TestConfigKeysAreFlagNames(t *testing.T) {
	_, _, help := fanout(t, "train", "-h")
	for _, o := range fileOptions() {
		if !strings.Contains(help, "  -"+o.name+" ") && !strings.Contains(help, "  -"+o.name+"\n") {
			t.Errorf("config key %q is not a flag of fanout train", o.name)
		}
	}
	readme := readmeText(t)
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no ```yaml example config")
	}
	fc, err := loadConfig(writeConfig(t, string(m[1])))
	if err != nil {
		t.Fatalf("README's example config: %v", err)
	}
	cfg := train.Defaults()
	var rf runFlags
	if err := fc.apply(fileOptions(), &cfg, &rf, nil); err != nil {
		t.Fatalf("README's example config: %v", err)
	}
	if cfg.WeightDecay != 5e-4 || cfg.Model != "gcn" || rf.j.Source.Data == "" {
		t.Errorf("README's example config gave %+v, data %q", cfg, rf.j.Source.Data)
	}
}

func TestConfigFileSpelling(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"weight_decay: 5e-4\n", `line 1: unknown key "weight_decay"; it is spelled "weight-decay"`},
		{"epochs: 2\nhidden: 16.9\n", "line 2: hidden: 16.9 is not an integer"},
		{"hidden: 1e3\n", "hidden: 1e3 is not an integer"},
		{"hidden: [16]\n", "hidden: want a single value, not a list"},
		{"hidden:\n", "hidden: no value"},
		{"lr: fast\n", "lr: fast is not a number"},
		{"seed: -1\n", "seed: -1 is not a non-negative integer"},
		{"fanouts: [10, 5.5]\n", "fanouts: 5.5 is not an integer"},
		{"full-eval: yes\n", "full-eval: yes is not true or false"},
		{"resume: true\n", `"resume" is not a config key; give --resume on the command line`},
		{"epochs: 2\nepochs: 3\n", `line 2: key "epochs" given twice`},
		{"- epochs\n", "want a mapping"},
		{"colour: blue\n", `unknown key "colour"`},
		{"threads: -1\n", "threads: -1, want 0 (all cores) or a positive count"},
		{"layers: 50\n", "layers: 50, want 1 to 32"},
		{"mode: fast\n", `mode: "fast", want auto, eager, replay or hybrid`},
	} {
		path := writeConfig(t, c.text)
		code, _, stderr := fanout(t, "train", "--config", path, "--device", "cpu")
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 ||
			strings.Contains(stderr, "generated") {
			t.Errorf("config %q: exit %d, stderr %q; want one line containing %q, before any data is made", c.text, code, stderr, c.want)
		}
	}
}

// TestConfigFileAndFlags: the dashed keys set what the flags set, a list or
// a string gives fanouts, and a flag given overrides the file.
func TestConfigFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, "weight-decay: 5e-4\ninput-dropout: 0.1\nfanouts: \"4,3\"\nhidden: 16\nepochs: 1\neval-every: 1\ndevice: cpu\nthreads: 1\nout: "+filepath.Join(dir, "run")+"\n")
	code, _, stderr := fanout(t, "train", "--config", path, "--hidden", "8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run", checkpoint.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum train.Summary
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&sum); err != nil {
		t.Fatal(err)
	}
	c := sum.Config
	if c.WeightDecay != 5e-4 || c.InDropout != 0.1 || train.FormatFanouts(c.Fanouts) != "4,3" || c.Hidden != 8 || c.Epochs != 1 {
		t.Errorf("config applied as %+v", c)
	}
}

// TestPlainParseErrors: impossible values are refused before any data is
// loaded, with the flag's name.
func TestPlainParseErrors(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"threads: -1, want 0 (all cores) or a positive count", []string{"train", "--threads", "-1"}},
		{"layers: 50, want 1 to 32", []string{"train", "--layers", "50"}},
		{"envelope-margin: 0.5, want at least 1", []string{"train", "--envelope-margin", "0.5"}},
		{"dropout: NaN", []string{"train", "--dropout", "NaN"}},
		{"heads: 0, want 1 to 1024", []string{"train", "--model", "gat", "--heads", "0"}},
		{"gat-project-first: is GAT's bottom layer's form, but the model is sage", []string{"train", "--gat-project-first"}},
		{"not defined: --gat-aggregate-first (GAT's bottom layer aggregates first by default", []string{"train", "--model", "gat", "--gat-aggregate-first"}},
		{"gin-eps: learn, but only gin has an ε to learn (model sage)", []string{"train", "--gin-eps", "learn"}},
		{"threads: -2", []string{"bench", "--threads", "-2", "--preset", "tiny"}},
		{"threads: -1", []string{"gen", "tiny", "--out", t.TempDir(), "--threads", "-1"}},
		{"threads: -1", []string{"import", "npz", "x.npz", "--out", t.TempDir(), "--threads", "-1"}},
	} {
		code, _, stderr := fanout(t, append(c.args, "--device", "cpu")...)
		if c.args[0] == "gen" || c.args[0] == "import" {
			code, _, stderr = fanout(t, c.args...)
		}
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "generated") || strings.Contains(stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want %q before any data is made", c.args, code, stderr, c.want)
		}
	}
}

// TestTF32FigureIsTheSameEverywhere: -h and README give one figure.
func TestTF32FigureIsTheSameEverywhere(t *testing.T) {
	readme := readmeText(t)
	figure := regexp.MustCompile(`[0-9.]+e-[0-9]+ relative error in a product`).FindString(tf32Error)
	if figure == "" || !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), figure) {
		t.Errorf("README does not give --tf32's figure %q", figure)
	}
	_, _, help := fanout(t, "train", "-h")
	if !strings.Contains(help, figure) {
		t.Errorf("train -h does not give --tf32's figure %q", figure)
	}
}

// TestErrorsQuoteAtMost200Bytes: an error quotes at most 200 bytes of the
// input it rejects, and says how long the input was (a pasted file in a
// flag was echoed whole).
func TestErrorsQuoteAtMost200Bytes(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cfg := writeConfig(t, "hidden: "+long+"\n")
	for _, args := range [][]string{
		{"train", "--device", "cpu", "--mode", long},
		{"train", "--device", long},
		{"train", "--device", "cpu", "--fanouts", long},
		{"train", "--device", "cpu", "--config", cfg},
		{"import", long, "x", "--out", t.TempDir()},
		{long},
	} {
		_, _, stderr := fanout(t, args...)
		if strings.Contains(stderr, strings.Repeat("x", 201)) || !strings.Contains(stderr, "... (5000 bytes)") {
			t.Errorf("%.40q...: stderr %.300q (%d bytes)", args, stderr, len(stderr))
		}
	}
}
