package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/cluster"
)

// mpiEnv lets mpirun run as root (CI runs as root) and the test binary act
// as fanout.
func mpiEnv(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found (Debian: openmpi-bin); CI installs it: " + err.Error())
	}
	t.Setenv("FANOUT_TEST_MAIN", "1")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
}

// result is a run's closing line without its timing.
func result(out string) string { return withoutLoss(resultLine(out, "test accuracy", ";")) }

// resultLine is the part of out's first line holding from, from from up to
// cut.
func resultLine(out, from, cut string) string {
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, from); i >= 0 {
			return strings.SplitN(l[i:], cut, 2)[0]
		}
	}
	return "(no result in: " + out + ")"
}

// TestMPIMatchesOneProcess: two CPU processes started by mpirun (and,
// separately, by fanout launch) train tiny to the one-process result.
func TestMPIMatchesOneProcess(t *testing.T) {
	mpiEnv(t)
	var one bytes.Buffer
	// --global-batch: the processes split the one process's batch.
	args := []string{"train", "--device", "cpu", "--threads", "1", "--epochs", "2", "--global-batch", "256"}
	if code := run(context.Background(), args, &one, &bytes.Buffer{}); code != 0 {
		t.Fatal("one process failed")
	}
	cmd := exec.Command("mpirun", append([]string{"-n", "2", "--oversubscribe", os.Args[0]}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	if got, want := result(string(out)), result(one.String()); got != want {
		t.Fatalf("two MPI processes: %q; one process: %q\n%s", got, want, out)
	}
	var lo, le bytes.Buffer
	if code := run(context.Background(), append([]string{"launch", "--nproc", "2", "--"}, args...), &lo, &le); code != 0 {
		t.Fatalf("fanout launch: exit %d\n%s%s", code, lo.String(), le.String())
	}
	if got, want := result(lo.String()), result(one.String()); got != want {
		t.Fatalf("fanout launch: %q; one process: %q", got, want)
	}
}

// TestMPIRankFailureEndsJob: when one of two MPI processes fails (here its
// data does not exist: mpirun's MPMD form gives it other arguments), it
// says which rank failed and why and ends the job, instead of leaving the
// other waiting in its first collective for ever.
func TestMPIRankFailureEndsJob(t *testing.T) {
	mpiEnv(t)
	args := []string{"train", "--device", "cpu", "--threads", "1", "--epochs", "1"}
	mpiArgs := append([]string{"--oversubscribe", "-n", "1", os.Args[0]}, args...)
	mpiArgs = append(append(append(mpiArgs, ":", "-n", "1", os.Args[0]), args...), "--data", filepath.Join(t.TempDir(), "missing"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "mpirun", mpiArgs...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the job did not end within 60 s of one rank failing:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the job succeeded without its data:\n%s", out)
	}
	if !strings.Contains(string(out), "rank 1 of 2: --data:") || !strings.Contains(string(out), "ending the job") {
		t.Fatalf("the failing rank did not say why:\n%s", out)
	}
}

// TestMPIExchangedFeatures: two CPU processes under mpirun, each holding
// half the feature rows (two hosts of one process) and fetching the rest
// from the other with MPI_Alltoall, train tiny to the one-process result,
// eager and replay, and say what the exchange moved.
func TestMPIExchangedFeatures(t *testing.T) {
	mpiEnv(t)
	for _, mode := range []string{"eager", "replay"} {
		var one bytes.Buffer
		args := []string{"train", "--device", "cpu", "--threads", "1", "--epochs", "2", "--mode", mode, "--global-batch", "256"}
		if code := run(context.Background(), args, &one, &bytes.Buffer{}); code != 0 {
			t.Fatal("one process failed")
		}
		args = append(args, "--shard-features", "hosts", "--ranks-per-host", "1")
		cmd := exec.Command("mpirun", append([]string{"-n", "2", "--oversubscribe", os.Args[0]}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: mpirun: %v\n%s", mode, err, out)
		}
		if got, want := result(string(out)), result(one.String()); got != want {
			t.Fatalf("%s: two MPI processes exchanging features: %q; one process: %q\n%s", mode, got, want, out)
		}
		if !strings.Contains(string(out), "other hosts") || !strings.Contains(string(out), "spread over 2 ranks in 2 host(s)") {
			t.Fatalf("%s: no word of the exchange:\n%s", mode, out)
		}
		// Replay sizes the chunks from the observed batches, eager from the
		// gathers as they come: the wire carries at most 2.5x the live
		// bytes.
		var live, wire float64
		if m := regexp.MustCompile(`other hosts ([0-9.]+) KiB \(([0-9.]+) KiB on the wire\)`).FindStringSubmatch(string(out)); m != nil {
			live, _ = strconv.ParseFloat(m[1], 64)
			wire, _ = strconv.ParseFloat(m[2], 64)
		}
		if live == 0 || wire > 2.5*live {
			t.Fatalf("%s: %v KiB live, %v KiB on the wire per gather:\n%s", mode, live, wire, out)
		}
		t.Logf("%s: other hosts %.1f KiB live, %.1f KiB on the wire per gather", mode, live, wire)
	}
}

// launchDeadline is how long a launched job of tiny may take here before
// the test calls it hung (each one trains in seconds).
const launchDeadline = 3 * time.Minute

// launchJob runs `fanout launch args...` as its own process group, killed
// whole (mpirun and its ranks) if it outlives the deadline, and returns
// its exit status and output.
func launchJob(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"launch"}, args...)...)
	cmd.Env = os.Environ() // mpiEnv set FANOUT_TEST_MAIN and mpirun's root variables
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), out.String()
	case <-time.After(launchDeadline):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("fanout launch %s: still running after %s (killed):\n%s", strings.Join(args, " "), launchDeadline, out.String())
	}
	return 0, ""
}

// TestLaunchResumeEnds: two CPU processes under fanout launch resume a run
// and exit, at the uninterrupted run's result. Only rank 0 holds the run
// directory: before the fix only it resumed, rank 1 trained again from
// epoch 1 with its initial weights, and once rank 0 was done the job never
// ended (rank 1 spun in its next all-reduce).
func TestLaunchResumeEnds(t *testing.T) {
	mpiEnv(t)
	dir := t.TempDir()
	job := func(epochs int, extra ...string) string {
		args := append([]string{"--nproc", "2", "--", "train", "--device", "cpu", "--threads", "1", "--hidden", "16", "--epochs", strconv.Itoa(epochs)}, extra...)
		code, out := launchJob(t, args...)
		if code != 0 {
			t.Fatalf("fanout launch %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	whole := job(3)
	run := filepath.Join(dir, "run")
	job(2, "--out", run)
	resumed := job(3, "--out", run, "--resume")
	if got, want := result(resumed), result(whole); got != want {
		t.Fatalf("resumed: %q; uninterrupted: %q\n%s", got, want, resumed)
	}
	if !strings.Contains(resumed, "resumed from") {
		t.Fatalf("the job did not say it resumed:\n%s", resumed)
	}
}

// TestLaunchNamesRanks: under fanout launch's mpirun every line carries the
// rank that wrote it (all were "[rank 0]", mpirun's), and when a rank is
// killed the job's last line names it (it said "rank 0: exit status 137").
func TestLaunchNamesRanks(t *testing.T) {
	mpiEnv(t)
	args := []string{"--nproc", "2", "--", "train", "--device", "cpu", "--threads", "1", "--hidden", "8", "--epochs", "1"}
	code, out := launchJob(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for r := range 2 {
		if want := regexp.MustCompile(fmt.Sprintf(`(?m)^\[rank %d\] training sage \([^)]*\) on rank %d of 2`, r, r)); !want.MatchString(out) {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
	t.Setenv("FANOUT_TEST_KILL_RANK", "1")
	code, out = launchJob(t, args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; code == 0 || last != "fanout launch: the job failed: rank 1 was killed by signal 9 (Killed)" {
		t.Fatalf("exit %d, last line %q; want rank 1 named\n%s", code, last, out)
	}
}

// TestLaunchAsRootSaysWhatToSet: as root without Open MPI's two variables,
// launch says what to set in its own error, before mpirun's banner.
func TestLaunchAsRootSaysWhatToSet(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	err := cluster.MPIRootAllowed(0, get)
	if err == nil || !strings.Contains(err.Error(), "set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1") {
		t.Fatalf("root without the variables: %v", err)
	}
	if err := cluster.MPIRootAllowed(1000, get); err != nil {
		t.Fatalf("another user: %v", err)
	}
	env["OMPI_ALLOW_RUN_AS_ROOT"], env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1", "1"
	if err := cluster.MPIRootAllowed(0, get); err != nil {
		t.Fatalf("root with the variables: %v", err)
	}
	if os.Geteuid() != 0 {
		return
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		return
	}
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "")
	oneLineError(t, "set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "launch", "--nproc", "2", "--", "train", "--device", "cpu")
}
