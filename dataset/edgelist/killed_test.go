package edgelist

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// killedChild is the environment variable that makes
// TestKilledImportLeavesNothing's child process run an import that waits
// to be killed: its value is the fixture directory.
const killedChild = "FANOUT_EDGELIST_KILLED_CHILD"

// TestKilledImportLeavesNothing kills (SIGKILL) a process in the middle of
// an import, then checks that the next import removes the scratch
// directory the killed one left.
func TestKilledImportLeavesNothing(t *testing.T) {
	if dir := os.Getenv(killedChild); dir != "" {
		runKilledChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	nodes, edges := randomEdges(t, dir, 200, 20000, 11)
	tmp := filepath.Join(dir, "scratch")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledImportLeavesNothing$")
	cmd.Env = append(os.Environ(), killedChild+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "ready")
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child import never got going")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	left, _ := os.ReadDir(tmp)
	if len(left) != 1 || !strings.HasPrefix(left[0].Name(), scratchPrefix) {
		t.Fatalf("the killed import left %v, want its scratch directory", left)
	}
	o := opts(nodes)
	o.Memory, o.TempDir = MinMemory, tmp
	im, err := ImportBounded(context.Background(), []string{edges}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Stats.Stale) != 1 || im.Stats.Stale[0] != left[0].Name() {
		t.Fatalf("removed %v, want %s", im.Stats.Stale, left[0].Name())
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadDir(tmp); len(after) != 0 {
		t.Fatalf("left %v after the next import", after)
	}
}

// runKilledChild imports the fixture in dir with a budget that writes
// runs, and once past the first merge pass's start says so (a file
// "ready") and waits to be killed.
func runKilledChild(dir string) {
	o := opts(filepath.Join(dir, "nodes.csv"))
	o.Memory, o.TempDir = MinMemory, filepath.Join(dir, "scratch")
	o.Progress = func(p Progress) {
		if p.Stage != "read" {
			os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
			time.Sleep(time.Hour)
		}
	}
	ImportBounded(context.Background(), []string{filepath.Join(dir, "edges.csv")}, o)
	os.Exit(3)
}
