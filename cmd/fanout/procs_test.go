package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

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
