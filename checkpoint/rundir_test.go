package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func TestRunDirModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	// A new directory is created; resuming one that does not exist is an error.
	if err := CheckRunDir(dir, ResumeRun); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("resume of a missing directory: %v", err)
	}
	r, err := OpenRunDir(dir, NewRun)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := OpenRunDir(dir, ResumeRun); err == nil || !strings.Contains(err.Error(), "has no last.ckpt") {
		t.Errorf("resume without a checkpoint: %v", err)
	}
	touch(t, dir, "notes.txt")
	// Two epochs' lines: a run went past its first checkpoint.
	if err := os.WriteFile(filepath.Join(dir, MetricsFile), []byte("{}\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, check := range []func() error{
		func() error { return CheckRunDir(dir, NewRun) },
		func() error { _, err := OpenRunDir(dir, NewRun); return err },
	} {
		if err := check(); err == nil || !strings.Contains(err.Error(), "already holds a run (metrics.jsonl)") ||
			!strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), "--force") {
			t.Errorf("new run over an old one: %v", err)
		}
	}
	touch(t, dir, LastCheckpoint, BestCheckpoint, SummaryFile)
	if err := CheckRunDir(dir, ForceRun); err != nil || !exists(dir, LastCheckpoint) {
		t.Fatalf("a check must change nothing: %v", err)
	}
	r, err = OpenRunDir(dir, ForceRun)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for _, f := range runFiles {
		if exists(dir, f) {
			t.Errorf("--force left %s", f)
		}
	}
	if !exists(dir, "notes.txt") {
		t.Error("--force removed a file that is not the run's")
	}
}

// TestRunDirStoppedBeforeCheckpoint: a run killed before its first
// checkpoint leaves its lock, an empty metrics.jsonl and perhaps best.ckpt.
// A new run there starts again without --force (it was refused: "continue
// it with --resume", while --resume found no last.ckpt), removing them;
// StoppedBeforeCheckpoint tells a command asked to resume it to do the same.
func TestRunDirStoppedBeforeCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if StoppedBeforeCheckpoint(dir) {
		t.Fatal("a missing directory: stopped before its first checkpoint")
	}
	r, err := OpenRunDir(dir, NewRun)
	if err != nil {
		t.Fatal(err)
	}
	kill(r)
	touch(t, dir, BestCheckpoint)
	if err := os.WriteFile(filepath.Join(dir, MetricsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !StoppedBeforeCheckpoint(dir) {
		t.Fatal("a run killed before its first checkpoint is not recognised")
	}
	if err := CheckRunDir(dir, NewRun); err != nil {
		t.Fatalf("check: %v", err)
	}
	r, err = OpenRunDir(dir, NewRun)
	if err != nil {
		t.Fatalf("a new run over a run killed before its first checkpoint: %v", err)
	}
	r.Close()
	slices.Sort(r.Removed)
	if !slices.Equal(r.Removed, []string{BestCheckpoint, MetricsFile}) || exists(dir, BestCheckpoint) {
		t.Errorf("removed %v", r.Removed)
	}
	// Validations within the first epoch leave lines of epoch 1 only; a
	// line of epoch 2 (or one that is not a metrics line) is a run to keep.
	metrics := func(lines string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, MetricsFile), []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	metrics(`{"epoch":1,"step":3}` + "\n" + `{"epoch":1,"step":6}` + "\n" + `{"epoch":1}` + "\n")
	if !beforeCheckpoint(dir) {
		t.Error("a run killed after validations within its first epoch is not recognised")
	}
	for _, kept := range []string{`{"epoch":1}` + "\n" + `{"epoch":2,"step":1}` + "\n", "not json\n", `{"step":1}` + "\n"} {
		metrics(kept)
		if beforeCheckpoint(dir) {
			t.Errorf("metrics %q: stopped before its first checkpoint", kept)
		}
	}
	metrics("")
	for _, held := range []string{LastCheckpoint, SummaryFile} {
		touch(t, dir, held)
		if StoppedBeforeCheckpoint(dir) {
			t.Errorf("a directory with %s: stopped before its first checkpoint", held)
		}
		if err := CheckRunDir(dir, NewRun); err == nil {
			t.Errorf("a new run over %s: no error", held)
		}
		os.Remove(filepath.Join(dir, held))
	}
}

// kill stands for a process killed while it held r: the system closes its
// descriptor, and the lock file stays.
func kill(r *RunDir) {
	r.lock.Close()
	r.lock = nil
}

// TestRunDirCloseRemovesLock: a run that ends leaves no lock file (a dry
// run's check leaves one it found).
func TestRunDirCloseRemovesLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r, err := OpenRunDir(dir, NewRun)
	if err != nil {
		t.Fatal(err)
	}
	if !exists(dir, LockFile) {
		t.Fatal("an open run has no lock file")
	}
	if err := r.Close(); err != nil || exists(dir, LockFile) {
		t.Fatalf("after Close: %v, lock file there %v", err, exists(dir, LockFile))
	}
	touch(t, dir, LockFile)
	if err := CheckRunDir(dir, NewRun); err != nil || !exists(dir, LockFile) {
		t.Fatalf("a dry run: %v, lock file there %v", err, exists(dir, LockFile))
	}
}

func TestRunDirRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, LastCheckpoint, ".ckpt-123", ".tmp-456", "keep.ckpt")
	if err := CheckRunDir(dir, ResumeRun); err != nil || !exists(dir, ".ckpt-123") {
		t.Fatalf("check: %v", err)
	}
	r, err := OpenRunDir(dir, ResumeRun)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	slices.Sort(r.Removed)
	if !slices.Equal(r.Removed, []string{".ckpt-123", ".tmp-456"}) || exists(dir, ".ckpt-123") || exists(dir, ".tmp-456") {
		t.Errorf("removed %v", r.Removed)
	}
	if !exists(dir, "keep.ckpt") || !exists(dir, LastCheckpoint) {
		t.Error("removed a file that is not temporary")
	}
}

func TestRunDirLock(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "aix" {
		t.Skip("no flock on " + runtime.GOOS)
	}
	dir := t.TempDir()
	r, err := OpenRunDir(dir, NewRun)
	if err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprint(os.Getpid())
	if b, _ := os.ReadFile(filepath.Join(dir, LockFile)); strings.TrimSpace(string(b)) != pid {
		t.Errorf("lock file holds %q, want the pid %s", b, pid)
	}
	// A second opener (another open file description, as another process
	// would have) is refused with the holder's pid, and so is a check.
	for _, open := range []func() error{
		func() error { _, err := OpenRunDir(dir, NewRun); return err },
		func() error { return CheckRunDir(dir, NewRun) },
	} {
		if err := open(); err == nil || !strings.Contains(err.Error(), "in use by process "+pid) {
			t.Errorf("second opener: %v", err)
		}
	}
	r.Close()
	r, err = OpenRunDir(dir, NewRun)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	r.Close()
}
