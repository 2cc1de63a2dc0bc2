package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/cluster"
)

func testEnv(n int) func(int) []string {
	return func(r int) []string {
		return append(os.Environ(), "FANOUT_TEST_MAIN=1", "RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(n),
			"LOCAL_RANK="+strconv.Itoa(r), "LOCAL_WORLD_SIZE="+strconv.Itoa(n), "MASTER_ADDR=127.0.0.1", "FANOUT_TOKEN=x")
	}
}

// TestRunJob: every rank runs, its lines carry its rank; when ranks fail,
// the job fails naming one.
func TestRunJob(t *testing.T) {
	var out, errb bytes.Buffer
	if err := cluster.RunProcesses(context.Background(), os.Args[0], []string{"version"}, 2, testEnv(2), cluster.RankLines(&out, &errb)); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	for _, want := range []string{"[rank 0] fanout ", "[rank 1] fanout "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	// Under torchrun's variables CPU processes need mpirun's wiring (MPI
	// sees a world of one), so every rank fails and the job says which.
	err := cluster.RunProcesses(context.Background(), os.Args[0], []string{"train", "--device", "cpu", "--epochs", "1"}, 2, testEnv(2), cluster.RankLines(&out, &errb))
	if err == nil || !strings.Contains(err.Error(), "the job failed: rank ") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(errb.String(), "] fanout train: CPU processes reduce through MPI") && !strings.Contains(errb.String(), "] fanout train: MPI: ") {
		t.Errorf("the ranks' reason is not shown:\n%s", errb.String())
	}
}

func TestLaunchUsage(t *testing.T) {
	oneLineError(t, "nothing to launch", "launch", "--nproc", "2")
	oneLineError(t, "nproc: 0, want at least one process", "launch", "--nproc", "0", "--", "version")
	oneLineError(t, "nproc: -3, want at least one process", "launch", "--nproc", "-3", "--", "version")
	oneLineError(t, "nproc: 100000, more than the 16 GPU processes one host runs", "launch", "--nproc", "100000", "--", "version")
	oneLineError(t, "nproc: 100000 CPU processes, more than this host's", "launch", "--nproc", "100000", "--", "train", "--device", "cpu")
	oneLineError(t, "port: 70000, want a port in 1..65535", "launch", "--nproc", "1", "--port", "70000", "--", "version")
}

// TestCheckNproc: CPU processes up to the host's cores and GPU processes
// up to 16 pass; more, or fewer than one, are refused.
func TestCheckNproc(t *testing.T) {
	for _, c := range []struct {
		n, cores int
		cpu, ok  bool
	}{
		{1, 1, true, true}, {2, 2, true, true}, {3, 2, true, false}, {16, 2, false, true}, {17, 64, false, false},
		{0, 8, true, false}, {0, 8, false, false}, {-1, 8, false, false},
	} {
		if err := checkNproc(c.n, c.cpu, c.cores); (err == nil) != c.ok {
			t.Errorf("%d processes (CPU %t) on %d cores: %v, want accepted %t", c.n, c.cpu, c.cores, err, c.ok)
		}
	}
}
