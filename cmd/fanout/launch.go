package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/fanout-gnn/fanout/cluster"
)

// runLaunch starts --nproc local processes of `fanout ARGS...` as one job,
// with the variables torchrun would set and a fresh token, prefixes their
// output with the rank, forwards Ctrl-C and SIGTERM to them, and, when one
// fails, stops the others and exits non-zero naming it.
func runLaunch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("launch", stderr)
	nproc := fs.Int("nproc", 1, "processes to start on this host: one per GPU, at most 16; CPU processes (--device cpu) at most the host's cores")
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
	if err := checkNproc(*nproc, cpuJob(rest), runtime.NumCPU()); err != nil {
		return err
	}
	if *port < 1 || *port > 65535 {
		return fmt.Errorf("port: %d, want a port in 1..65535", *port)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	if cpuJob(rest) {
		return cluster.RunMPI(ctx, exe, rest, *nproc, stdout, stderr)
	}
	return cluster.RunProcesses(ctx, exe, rest, *nproc, cluster.LocalEnv(*nproc, *port, hex.EncodeToString(tok)), cluster.RankLines(stdout, stderr))
}

// maxGPUProcs is the most GPU processes launch starts on one host: one
// per GPU, and no host has more than 16.
const maxGPUProcs = 16

// checkNproc refuses a count of processes below one, or more than the
// host can run: for CPU processes (cpu) its cores, each process
// computing on one of its own at least, and for GPU processes
// maxGPUProcs.
func checkNproc(n int, cpu bool, cores int) error {
	switch {
	case n < 1:
		return fmt.Errorf("nproc: %d, want at least one process", n)
	case cpu && n > cores:
		return fmt.Errorf("nproc: %d CPU processes, more than this host's %d cores (each process computes on one of its own)", n, cores)
	case !cpu && n > maxGPUProcs:
		return fmt.Errorf("nproc: %d, more than the %d GPU processes one host runs (one per GPU)", n, maxGPUProcs)
	}
	return nil
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
