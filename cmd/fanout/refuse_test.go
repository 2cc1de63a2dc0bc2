package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

// TestRefusedBeforeWork: settings that a run cannot honour are one line
// naming the flag, before any training: more CPU devices than cores (once
// accepted, and a run that never ended), a GPU budget on the CPU or not a
// size, a host band outside the hybrid mode or not a size, a link
// prediction setting on a node task, a TensorBoard directory
// that cannot be made (once reported as mkdir, naming no flag, after the
// run directory was made).
func TestRefusedBeforeWork(t *testing.T) {
	many := strconv.Itoa(runtime.NumCPU() + 1)
	oneLineError(t, "devices: "+many+" CPU devices, but this host has", "train", "--device", "cpu", "--devices", many, "--epochs", "1")
	oneLineError(t, "devices: 100000 CPU devices", "train", "--device", "cpu", "--devices", "100000")
	oneLineError(t, `gpu-memory: "12XB" is not a size`, "train", "--device", "cpu", "--gpu-memory", "12XB")
	oneLineError(t, `gpu-memory: "12GiB" is the hybrid mode's budget of GPU memory, and the mode is`, "train", "--device", "cpu", "--gpu-memory", "12GiB")
	oneLineError(t, `host-band: "2GiB" is the hybrid mode's band of host memory, and the mode is`, "train", "--device", "cpu", "--host-band", "2GiB")
	oneLineError(t, `host-band: "wide" is not a size`, "train", "--device", "cpu", "--mode", "hybrid", "--host-band", "wide")
	oneLineError(t, "eval-negatives: a link prediction setting, but the task is node", "train", "--device", "cpu", "--eval-negatives", "10")
	oneLineError(t, "decoder: a link prediction setting", "train", "--device", "cpu", "--decoder", "mlp")
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	run := filepath.Join(t.TempDir(), "run")
	oneLineError(t, "tensorboard: mkdir "+file+": not a directory", append(trainArgs("--out", run), "--tensorboard", filepath.Join(file, "tb"))...)
	if _, err := os.Stat(run); err == nil {
		t.Error("a refused --tensorboard left the run directory")
	}
}

// TestOutputsKeptAndWritten: a node run's --embeddings writes its last
// hidden layer (it once wrote nothing); a finished run leaves no lock
// file; eval keeps output files that exist unless --force (the README's
// own eval once replaced what train wrote), says a directory given as the
// checkpoint is one, and a resume on another dataset names it.
func TestOutputsKeptAndWritten(t *testing.T) {
	dir := t.TempDir()
	run, emb := filepath.Join(dir, "run"), filepath.Join(dir, "emb.npy")
	if code, _, stderr := fanout(t, append(trainArgs("--out", run), "--embeddings", emb)...); code != 0 || !strings.Contains(stderr, "wrote embeddings [16384 8] to "+emb) {
		t.Fatalf("train --embeddings: exit %d\n%s", code, stderr)
	}
	if _, shape, err := npy.ReadFile(emb); err != nil || len(shape) != 2 || shape[1] != 8 {
		t.Fatalf("embeddings of shape %v: %v", shape, err)
	}
	if _, err := os.Stat(filepath.Join(run, checkpoint.LockFile)); err == nil {
		t.Error("a finished run left its lock file")
	}
	best := filepath.Join(run, checkpoint.BestCheckpoint)
	oneLineError(t, "embeddings: "+emb+" exists; give --force", "eval", "--checkpoint", best, "--device", "cpu", "--embeddings", emb)
	oneLineError(t, "embeddings: "+emb+" exists; give --force", append(trainArgs("--out", filepath.Join(dir, "run2")), "--embeddings", emb)...)
	if code, out, stderr := fanout(t, "eval", "--checkpoint", best, "--device", "cpu", "--embeddings", emb, "--force"); code != 0 || !strings.Contains(out, "wrote embeddings") {
		t.Errorf("eval --force: exit %d\n%s%s", code, out, stderr)
	}
	oneLineError(t, run+" is a directory; give a checkpoint file in it", "eval", "--checkpoint", run, "--device", "cpu")
	oneLineError(t, "trained on dataset tiny; this dataset, tiny, differs", "train", "--device", "cpu", "--threads", "2", "--epochs", "2", "--hidden", "8",
		"--out", run, "--resume", "--data", genTiny(t, "--seed", "9"))
}
