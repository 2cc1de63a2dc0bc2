package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// LocalEnv is the environment of process r of a job of nproc processes on
// this host, as torchrun would set it: ranks, the rendezvous store at
// 127.0.0.1:port, and the job's token.
func LocalEnv(nproc, port int, token string) func(r int) []string {
	return func(r int) []string {
		return append(os.Environ(), "RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(nproc),
			"LOCAL_RANK="+strconv.Itoa(r), "LOCAL_WORLD_SIZE="+strconv.Itoa(nproc),
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port), "FANOUT_TOKEN="+token)
	}
}

// LineSink takes each line process p of a job writes, on its stdout or
// its stderr; RunProcesses calls it one line at a time.
type LineSink func(p int, line string, isErr bool)

// RankLines writes each line of process r to stdout or stderr, prefixed
// with its rank.
func RankLines(stdout, stderr io.Writer) LineSink {
	return func(r int, line string, isErr bool) {
		w := stdout
		if isErr {
			w = stderr
		}
		fmt.Fprintf(w, "[rank %d] %s\n", r, line)
	}
}

// RunProcesses starts n processes of exe args (env(r) is process r's
// environment) and waits for all of them, handing each line they write
// to sink. When one fails the others are stopped (SIGTERM) and the error
// names the first that failed; when ctx ends they are interrupted
// (SIGINT: they save and exit) and waited for.
func RunProcesses(ctx context.Context, exe string, args []string, n int, env func(int) []string, sink LineSink) error {
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
