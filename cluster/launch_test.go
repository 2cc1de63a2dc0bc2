package cluster

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestMPILines: mpirun's tagged lines go to their rank's stream with the
// rank's prefix, its own lines to stderr, and the first rank failure it
// reports (with a later exit code) is kept.
func TestMPILines(t *testing.T) {
	var out, errb bytes.Buffer
	m := newMPILines(&out, &errb)
	for _, l := range []string{"[1,0]<stdout>:test accuracy 0.9", "[1,1]<stderr>:fanout train: boom", "-----",
		"Process name: [[123,1],1]", "Exit code:    3", "MPI_ABORT was invoked on rank 0"} {
		m.sink(0, l, false)
	}
	if out.String() != "[rank 0] test accuracy 0.9\n" {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.HasPrefix(errb.String(), "[rank 1] fanout train: boom\n[mpirun] Process name") {
		t.Errorf("stderr %q", errb.String())
	}
	if m.failed != "rank 1 exited with status 3" {
		t.Errorf("failed %q, want rank 1's exit status", m.failed)
	}
	m = newMPILines(&out, &errb)
	m.sink(0, "mpirun noticed that process rank 2 with PID 77 on node h exited on signal 9 (Killed).", false)
	if m.failed != "rank 2 was killed by signal 9 (Killed)" {
		t.Errorf("failed %q", m.failed)
	}
}

func TestLocalEnv(t *testing.T) {
	env := LocalEnv(4, 29501, "tok")(2)
	for _, want := range []string{"RANK=2", "WORLD_SIZE=4", "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29501", "FANOUT_TOKEN=tok"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	l, err := FromEnv(env)
	if err != nil || l.Rank != 2 || l.WorldSize != 4 || l.MasterPort != 29501 {
		t.Errorf("FromEnv: %+v, %v", l, err)
	}
}
