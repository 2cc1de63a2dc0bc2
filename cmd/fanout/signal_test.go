//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/checkpoint"
)

// TestMain lets a test run the command as a separate process: the test
// binary started with FANOUT_TEST_MAIN=1 is fanout.
func TestMain(m *testing.M) {
	if os.Getenv("FANOUT_TEST_MAIN") == "1" {
		// A rank of an MPI job that is killed (TestLaunchNamesRanks), once
		// started: mpirun names a rank that dies within its first
		// milliseconds only as "1 process returned a non-zero exit code".
		if r := os.Getenv("FANOUT_TEST_KILL_RANK"); r != "" && r == os.Getenv("OMPI_COMM_WORLD_RANK") {
			time.Sleep(300 * time.Millisecond)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		main()
	}
	os.Exit(m.Run())
}

// child is the command running as another process.
type child struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	lines  chan string // stderr, line by line; closed at its end
	done   chan struct{}
}

// startFanout starts the test binary as fanout with args.
func startFanout(t *testing.T, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], args...), lines: make(chan string, 1024), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "FANOUT_TEST_MAIN=1")
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		defer close(c.lines)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			c.stderr.WriteString(sc.Text() + "\n")
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	return c
}

// waitFor waits for a stderr line containing s.
func (c *child) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("the process ended before printing %q", s)
			}
			if strings.Contains(l, s) {
				return
			}
		case <-timeout:
			t.Fatalf("no line containing %q in a minute", s)
		}
	}
}

// exit waits for the process and returns its exit status and stderr.
func (c *child) exit(t *testing.T) (int, string) {
	t.Helper()
	<-c.done
	err := c.cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return c.cmd.ProcessState.ExitCode(), c.stderr.String()
}

// TestSignals: Ctrl-C and SIGTERM save last.ckpt and exit with 130 and 143;
// while a run holds its directory another is refused with its pid; a killed
// run's lock is released and its temporary files removed at the next start.
func TestSignals(t *testing.T) {
	long := []string{"train", "--device", "cpu", "--threads", "1", "--epochs", "1000000", "--hidden", "8"}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			run := filepath.Join(t.TempDir(), "run")
			p := startFanout(t, append(long, "--out", run)...)
			p.waitFor(t, "epoch 2/")
			oneLineError(t, fmt.Sprintf("in use by process %d", p.cmd.Process.Pid), trainArgs("--out", run, "--resume")...)
			p.cmd.Process.Signal(c.sig)
			code, stderr := p.exit(t)
			if code != c.code || !strings.Contains(stderr, "interrupted: saved "+filepath.Join(run, checkpoint.LastCheckpoint)) {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			ck, err := checkpoint.Load(filepath.Join(run, checkpoint.LastCheckpoint))
			if err != nil || ck.State.Epoch < 2 {
				t.Fatalf("last.ckpt: %v (state %+v)", err, ck)
			}
		})
	}
	t.Run("SIGKILL", func(t *testing.T) {
		run := filepath.Join(t.TempDir(), "run")
		p := startFanout(t, append(long, "--out", run)...)
		p.waitFor(t, "epoch 2/")
		p.cmd.Process.Kill()
		p.exit(t)
		// As if it died while saving.
		os.WriteFile(filepath.Join(run, ".ckpt-12345"), []byte("partial"), 0o644)
		code, _, stderr := fanout(t, trainArgs("--out", run, "--resume")...)
		if code != 0 || !strings.Contains(stderr, "removed 1 temporary file") {
			t.Fatalf("after kill: exit %d, %s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(run, ".ckpt-12345")); err == nil {
			t.Fatal("the temporary file is still there")
		}
	})
}

// TestClosedOutputDoesNotStopTraining: a run whose stdout and stderr are a
// pipe nobody reads any more (`fanout train | head -2`) trains to its end:
// every epoch's line in metrics.jsonl and summary.json written. SIGPIPE
// used to kill it at its first line, or between a checkpoint and its
// epoch's metrics line, which then lagged the checkpoint.
func TestClosedOutputDoesNotStopTraining(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first line
	cmd := exec.Command(os.Args[0], trainArgs("--out", run, "--epochs", "3")...)
	cmd.Env = append(os.Environ(), "FANOUT_TEST_MAIN=1")
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the run did not end within 2 minutes")
	}
	if err != nil {
		t.Fatalf("a run with a closed output: %v (%s)", err, cmd.ProcessState)
	}
	if got := epochSteps(t, run); len(got) != 3 {
		t.Fatalf("metrics.jsonl holds %d epochs, want 3", len(got))
	}
	if _, err := os.Stat(filepath.Join(run, checkpoint.SummaryFile)); err != nil {
		t.Fatal(err)
	}
}

// TestGenInterrupted: Ctrl-C and SIGTERM stop gen with 130 and 143, saying
// that nothing was written and leaving nothing behind; the next gen of the
// same target removes the temporary folder a killed one left, and says so.
// Before, Ctrl-C ended gen with no word, and a kill left ".NAME.tmp-*"
// folders (up to 1.3 GB) that nothing removed.
func TestGenInterrupted(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			parent := t.TempDir()
			p := startFanout(t, "gen", "products-sim", "--out", filepath.Join(parent, "ps"), "--threads", "1")
			p.waitFor(t, "generating products-sim")
			p.cmd.Process.Signal(c.sig)
			code, stderr := p.exit(t)
			if code != c.code || !strings.Contains(stderr, "interrupted: nothing written to "+filepath.Join(parent, "ps")) {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("an interrupted gen left %d entries, the first %s", len(entries), entries[0].Name())
			}
		})
	}
	t.Run("stale", func(t *testing.T) {
		parent := t.TempDir()
		stale := filepath.Join(parent, ".tiny.tmp-12345")
		os.Mkdir(stale, 0o700)
		os.WriteFile(filepath.Join(stale, "feat.npy"), []byte("half a file"), 0o644)
		code, _, stderr := fanout(t, "gen", "tiny", "--out", filepath.Join(parent, "tiny"))
		if code != 0 || !strings.Contains(stderr, "removed 1 temporary folder(s) that an interrupted write of "+filepath.Join(parent, "tiny")+" left: .tiny.tmp-12345") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if _, err := os.Stat(stale); err == nil {
			t.Fatal("the stale folder is still there")
		}
	})
}
