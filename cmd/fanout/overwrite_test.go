package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingOverwrittenWithoutForce: gen and import do not replace a
// dataset, export does not overwrite a file, and train does not write its
// run among a dataset's files, unless asked (--force, another --out); each
// refusal says what to do, before any work. Before, import replaced the
// dataset, export overwrote an unrelated file, and --out inside --data
// wrote run files into the dataset.
func TestNothingOverwrittenWithoutForce(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	if code, _, stderr := fanout(t, "gen", "tiny", "--out", data); code != 0 {
		t.Fatal(stderr)
	}
	manifest, _ := os.ReadFile(filepath.Join(data, "manifest.yaml"))
	oneLineError(t, data+" already holds a dataset; pass --force to replace it", "gen", "tiny", "--out", data, "--seed", "2")
	if got, _ := os.ReadFile(filepath.Join(data, "manifest.yaml")); string(got) != string(manifest) {
		t.Fatal("a refused gen changed the dataset")
	}
	if code, _, stderr := fanout(t, "gen", "tiny", "--out", data, "--seed", "2", "--force"); code != 0 {
		t.Fatalf("gen --force: %s", stderr)
	}
	cora := filepath.Join(t.TempDir(), "cora")
	os.MkdirAll(cora, 0o755)
	oneLineError(t, data+" already holds a dataset; pass --force to replace it", "import", "planetoid", cora, "--name", "cora", "--out", data)

	for _, out := range []string{data, filepath.Join(data, "run"), filepath.Join(data, ".", "sub", "..", "run")} {
		oneLineError(t, "is the dataset directory "+data+" or inside it", "train", "--data", data, "--device", "cpu", "--epochs", "1", "--out", out)
	}
	if _, err := os.Stat(filepath.Join(data, "run")); err == nil {
		t.Fatal("a refused run made its directory inside the dataset")
	}
	run := filepath.Join(dir, "run")
	if code, _, stderr := fanout(t, "train", "--data", data, "--device", "cpu", "--epochs", "1", "--hidden", "8", "--out", run); code != 0 {
		t.Fatalf("train beside the dataset: %s", stderr)
	}

	unrelated := filepath.Join(dir, "notes.txt")
	os.WriteFile(unrelated, []byte("mine"), 0o644)
	ckpt := filepath.Join(run, "best.ckpt")
	oneLineError(t, unrelated+" exists; pass --force to overwrite it", "export", "--checkpoint", ckpt, unrelated)
	if b, _ := os.ReadFile(unrelated); string(b) != "mine" {
		t.Fatal("a refused export changed the file")
	}
	if code, out, stderr := fanout(t, "export", "--checkpoint", ckpt, "--force", unrelated); code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("export --force: exit %d, %s", code, stderr)
	}
}
