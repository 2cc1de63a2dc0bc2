package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
)

func TestTrainerRefusesAnExistingRun(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 1
	dir := t.TempDir()
	if _, err := New(nil, ds, cfg, Options{RunDir: dir, Resume: true, Force: true}); err == nil || !strings.Contains(err.Error(), "exclude") {
		t.Errorf("--resume with --force: %v", err)
	}
	if _, err := New(nil, ds, cfg, Options{RunDir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "no last.ckpt") {
		t.Errorf("resume of an empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoint.SummaryFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil, ds, cfg, Options{RunDir: dir}); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("new run over an old one: %v", err)
	}
}
