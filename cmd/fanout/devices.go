package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// runDevices trains data-parallel on rf.devices devices (train --devices).
// CPU devices are CPU backends in this process, joined by the in-process
// collective; their threads split --threads.
func runDevices(ctx context.Context, rf *runFlags, cfg train.Config, opt train.Options, stdout, stderr io.Writer) error {
	n := rf.devices
	if rf.device != "cpu" {
		return fmt.Errorf("devices: %d devices need --device cpu in this build (several GPUs need the NCCL collective, which is not built yet)", n)
	}
	if cfg.Batch%n != 0 {
		return fmt.Errorf("batch: %d seeds do not split evenly over %d devices; choose a multiple of %d", cfg.Batch, n, n)
	}
	threads := rf.threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	mode := resolveMode(rf.mode, cpu.New(1))
	bes := make([]backend.Backend, n)
	for i := range bes {
		bes[i] = cpu.New(max(1, threads/n))
		if mode == "replay" {
			bes[i] = withCapture(bes[i])
		}
	}
	comms, err := inproc.New(bes)
	if err != nil {
		return err
	}
	ds, err := loadDataset(rf.src, rf.threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	if len(ds.Train) < cfg.Batch {
		return fmt.Errorf("batch: %d is larger than the training split (%d vertices in %s)", cfg.Batch, len(ds.Train), ds.Name)
	}
	desc := fmt.Sprintf("%d x %s", n, bes[0].Name())
	fmt.Fprintf(stderr, "training %s (%d layers, hidden %d, fanouts %s, global batch %d = %d x %d) on %s with %s, %s mode\n",
		cfg.Model, cfg.Layers, cfg.Hidden, train.FormatFanouts(cfg.Fanouts), cfg.Batch, n, cfg.Batch/n, ds.Name, desc, mode)
	ranks := make([]multigpu.Rank, n)
	for i := range ranks {
		ranks[i] = multigpu.Rank{Backend: bes[i], Coll: comms[i], Options: train.Options{Device: desc}}
	}
	opt.Device = desc
	ranks[0].Options = opt
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, mode == "replay", train.ReplayOptions{Margin: rf.margin})
	if errors.Is(err, train.ErrInterrupted) {
		fmt.Fprintln(stderr, "interrupted")
		return interruptStatus(ctx)
	}
	if err != nil {
		return err
	}
	printSummary(stdout, sum)
	return nil
}
