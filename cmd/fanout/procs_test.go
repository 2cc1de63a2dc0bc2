package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dist"
)

func TestGPUsPerHost(t *testing.T) {
	if err := gpusPerHost(&dist.Launch{LocalRank: 1, LocalWorldSize: 2}, 2); err != nil {
		t.Errorf("two processes, two GPUs: %v", err)
	}
	err := gpusPerHost(&dist.Launch{LocalRank: 1, LocalWorldSize: 2}, 1)
	if err == nil || !strings.Contains(err.Error(), "2 processes on this host but 1 GPU(s)") {
		t.Errorf("two processes sharing one GPU: %v", err)
	}
	if err := gpusPerHost(&dist.Launch{LocalRank: 3}, 2); err == nil {
		t.Error("local rank 3 with 2 GPUs: no error")
	}
}

func TestJobToken(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if _, err := jobToken(get); err == nil || !strings.Contains(err.Error(), "FANOUT_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	env["FANOUT_TOKEN"] = " s3cret "
	if tok, err := jobToken(get); err != nil || tok != "s3cret" {
		t.Errorf("token %q, %v", tok, err)
	}
	delete(env, "FANOUT_TOKEN")
	f := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(f, []byte("from-file\nrest"), 0o600)
	env["FANOUT_TOKEN_FILE"] = f
	if tok, err := jobToken(get); err != nil || tok != "from-file" {
		t.Errorf("token %q, %v", tok, err)
	}
}

// TestTrainUnderLauncher: under a launcher's environment train joins the
// job; CPU processes and a broken environment get plain errors.
func TestTrainUnderLauncher(t *testing.T) {
	t.Setenv("RANK", "0")
	t.Setenv("WORLD_SIZE", "2")
	t.Setenv("MASTER_ADDR", "127.0.0.1")
	var errb bytes.Buffer
	if code := run(context.Background(), strings.Fields("train --device cpu --epochs 1"), &bytes.Buffer{}, &errb); code == 0 || !strings.Contains(errb.String(), "MPI") {
		t.Errorf("CPU processes: exit %d, %s", code, errb.String())
	}
	t.Setenv("RANK", "2")
	errb.Reset()
	if code := run(context.Background(), strings.Fields("train --device cpu --epochs 1"), &bytes.Buffer{}, &errb); code == 0 || !strings.Contains(errb.String(), "rank 2 of a world of 2") {
		t.Errorf("rank 2 of 2: exit %d, %s", code, errb.String())
	}
}
