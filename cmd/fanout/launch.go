package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// runLaunch starts --nproc local processes of `fanout ARGS...` as one job,
// with the variables torchrun would set and a fresh token, prefixes their
// output with the rank, forwards Ctrl-C and SIGTERM to them, and, when one
// fails, stops the others and exits non-zero naming it.
func runLaunch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("launch", stderr)
	nproc := fs.Int("nproc", 1, "processes to start on this host (one per GPU)")
	port := fs.Int("port", 29500, "port of the rendezvous store on this host (MASTER_PORT)")
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if len(rest) == 0 {
		return errors.New("nothing to launch: fanout launch --nproc N -- train [flags]")
	}
	if *nproc < 1 || *port < 1 || *port > 65535 {
		return fmt.Errorf("--nproc %d --port %d: want at least one process and a port in 1..65535", *nproc, *port)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	env := func(r int) []string {
		return append(os.Environ(), "RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(*nproc),
			"LOCAL_RANK="+strconv.Itoa(r), "LOCAL_WORLD_SIZE="+strconv.Itoa(*nproc),
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(*port), "FANOUT_TOKEN="+hex.EncodeToString(tok))
	}
	if cpuJob(rest) {
		return runMPIJob(ctx, exe, rest, *nproc, stdout, stderr)
	}
	return runJob(ctx, exe, rest, *nproc, env, rankLines(stdout, stderr))
}

// cpuJob reports whether the launched command trains on CPUs.
func cpuJob(args []string) bool {
	for i, a := range args {
		if a == "--device=cpu" || a == "-device=cpu" || ((a == "--device" || a == "-device") && i+1 < len(args) && args[i+1] == "cpu") {
			return true
		}
	}
	return false
}

// lineSink takes each line process p of a job writes, on its stdout or
// its stderr; runJob calls it one line at a time.
type lineSink func(p int, line string, isErr bool)

// rankLines writes each line of process r to stdout or stderr, prefixed
// with its rank.
func rankLines(stdout, stderr io.Writer) lineSink {
	return func(r int, line string, isErr bool) {
		w := stdout
		if isErr {
			w = stderr
		}
		fmt.Fprintf(w, "[rank %d] %s\n", r, line)
	}
}

// runJob starts n processes of exe args and waits for all of them.
func runJob(ctx context.Context, exe string, args []string, n int, env func(int) []string, sink lineSink) error {
	var mu sync.Mutex // one line at a time on the shared outputs
	cmds := make([]*exec.Cmd, n)
	wgs := make([]sync.WaitGroup, n) // each rank's output readers
	for r := range cmds {
		wg := &wgs[r]
		c := exec.Command(exe, args...)
		c.Env = env(r)
		out, _ := c.StdoutPipe()
		errp, _ := c.StderrPipe()
		if err := c.Start(); err != nil {
			stop(cmds[:r], syscall.SIGTERM)
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		cmds[r] = c
		for _, p := range []struct {
			r     io.Reader
			isErr bool
		}{{out, false}, {errp, true}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(p.r)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					mu.Lock()
					sink(r, sc.Text(), p.isErr)
					mu.Unlock()
				}
				io.Copy(io.Discard, p.r) // a longer line: the rest, unread, must not stall the process
			}()
		}
	}
	errs := make(chan error, n)
	for r, c := range cmds {
		go func() {
			wgs[r].Wait() // its output first (exec: read the pipes before Wait)
			if err := c.Wait(); err != nil {
				errs <- fmt.Errorf("rank %d: %w", r, err)
				return
			}
			errs <- nil
		}()
	}
	var first error
	for range n {
		select {
		case err := <-errs:
			if err != nil && first == nil {
				first = err
				stop(cmds, syscall.SIGTERM)
			}
		case <-ctx.Done():
			stop(cmds, syscall.SIGINT) // they save and exit 130
			ctx = context.Background()
			err := <-errs
			if err != nil && first == nil {
				first = err
			}
		}
	}
	if first != nil {
		return fmt.Errorf("the job failed: %w", first)
	}
	return nil
}

// stop sends sig to every started process.
func stop(cmds []*exec.Cmd, sig os.Signal) {
	for _, c := range cmds {
		if c != nil && c.Process != nil {
			c.Process.Signal(sig)
		}
	}
}
