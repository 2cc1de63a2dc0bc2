package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/hybrid"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// runDevices trains data-parallel on rf.devices devices (train --devices).
// CPU devices are CPU backends in this process, joined by the in-process
// collective; their threads split --threads.
func runDevices(ctx context.Context, rf *runFlags, cfg train.Config, opt train.Options, stdout, stderr io.Writer) error {
	n := rf.devices
	if err := rf.groupBatch(&cfg, n, stderr); err != nil {
		return err
	}
	bes, colls, mode, err := openDevices(rf, stderr)
	if err != nil {
		return err
	}
	defer func() {
		for i := range bes {
			colls[i].Close()
			closeBackend(bes[i])
		}
	}()
	ds, err := loadDataset(rf.src, rf.threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	rf.fitBatch(&cfg, ds, n, stderr)
	if err := checkHostMemory(bes[0], cfg, ds, n); err != nil {
		return err
	}
	desc := fmt.Sprintf("%d x %s", n, bes[0].Name())
	fmt.Fprintf(stderr, "training %s (%d layers, hidden %d, fanouts %s, global batch %d = %d x %d) on %s with %s, %s mode\n",
		cfg.Model, cfg.Layers, cfg.Hidden, train.FormatFanouts(cfg.Fanouts), cfg.Batch, n, cfg.Batch/n, ds.Name, desc, mode)
	ranks := make([]multigpu.Rank, n)
	for i := range ranks {
		ranks[i] = multigpu.Rank{Backend: bes[i], Coll: colls[i], Options: train.Options{Device: desc, FeatureDType: opt.FeatureDType}}
	}
	opt.Device = desc
	ranks[0].Options = opt
	var tiers []*hybrid.Tier
	if mode == "hybrid" {
		if tiers, err = hybridRanks(rf, ds, cfg, bes, ranks, stderr); err != nil {
			return err
		}
	}
	topo, err := placeTopology(rf, ds, ranks, stderr)
	if err != nil {
		return err
	}
	var feats *multigpu.Features
	var xch *multigpu.Exchange
	if rf.shardFeatures == "hosts" {
		xch, err = placeExchanged(rf, ds, cfg, mode, ranks, rf.ranksPerHost, stderr)
	} else {
		feats, err = placeFeatures(rf, ds, cfg, mode, ranks, topo, stderr)
	}
	if err != nil {
		return err
	}
	defer feats.Free() // after every rank is done, before the devices close
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, mode == "replay" || mode == "hybrid", rf.replay())
	if errors.Is(err, train.ErrInterrupted) {
		fmt.Fprintln(stderr, "interrupted")
		return interruptStatus(ctx)
	}
	if err != nil {
		return err
	}
	printReads(topo, stderr)
	printFeatureReads(feats, 4*int64(ds.FeatDim), stderr)
	printExchange(xch, stderr)
	for i, t := range tiers {
		fmt.Fprintf(stderr, "device %d: cache %d rows, hit rate %.3f, peak %.1f MiB of a %.1f MiB budget\n",
			i, t.Stats.Placement.CacheRows, t.Stats.HitRate, float64(t.Stats.PeakBytes)/(1<<20), float64(t.Stats.Placement.Budget)/(1<<20))
	}
	printSummary(stdout, sum)
	return nil
}

// hybridRanks gives every rank its own tiered feature store under its
// device's budget (--gpu-memory applies per device).
func hybridRanks(rf *runFlags, ds *dataset.Dataset, cfg train.Config, bes []backend.Backend, ranks []multigpu.Rank, stderr io.Writer) ([]*hybrid.Tier, error) {
	if rf.hotRatio != 0 {
		return nil, fmt.Errorf("hot-ratio: CPU-computed hot vertices run on one device; with --devices %d use --hot-ratio 0", len(ranks))
	}
	tiers := make([]*hybrid.Tier, len(ranks))
	for i := range ranks {
		var log io.Writer
		if i == 0 {
			log = stderr // one plan printed: the ranks' are alike
		}
		hopt, err := hybridOptions(rf, bes[i], log)
		if err != nil {
			return nil, err
		}
		t, err := hybrid.NewTier(bes[i], ds, cfg, hopt)
		if err != nil {
			return nil, err
		}
		tiers[i] = t
		ranks[i].Options.Features = t.Store
		ranks[i].BeforeCapture = t.BeforeCapture
		ranks[i].Finished = func(*train.Trainer) error { return t.Finish() }
	}
	return tiers, nil
}

// allDevices is what --devices all means: every GPU, or on the CPU one
// device per two cores.
func allDevices(rf *runFlags) (int, error) {
	if rf.device == "cpu" {
		return max(1, runtime.NumCPU()/2), nil
	}
	cf := rf.cuda
	return cuda.DeviceCount(cuda.Options{LibDir: cf.libDir})
}

// openDevices opens rf.devices backends and their collective: CPU backends
// (threads split) joined in process, or GPUs 0..N-1 joined by NCCL. The
// mode is resolved as for one device (replay on GPUs).
func openDevices(rf *runFlags, stderr io.Writer) ([]backend.Backend, []backend.Collective, string, error) {
	n := rf.devices
	device := rf.device
	if device == "auto" {
		device = "cuda"
		cf := rf.cuda
		if _, err := cuda.Available(cuda.Options{LibDir: cf.libDir, CacheDir: cf.cacheDir}); err != nil {
			fmt.Fprintf(stderr, "device auto: training on %d CPU devices: %s\n", n, fallbackReason(err))
			device = "cpu"
		}
	}
	switch device {
	case "cpu":
		threads := rf.threads
		if threads == 0 {
			threads = runtime.NumCPU()
		}
		mode := resolveMode(rf.mode, cpu.New(1))
		bes := make([]backend.Backend, n)
		for i := range bes {
			bes[i] = cpu.New(max(1, threads/n))
			if mode == "replay" || mode == "hybrid" {
				bes[i] = withCapture(bes[i])
			}
		}
		comms, err := inproc.New(bes)
		if err != nil {
			return nil, nil, "", err
		}
		colls := make([]backend.Collective, n)
		for i, c := range comms {
			colls[i] = c
		}
		return bes, colls, mode, nil
	case "cuda":
		return openGPUs(rf, stderr)
	}
	return nil, nil, "", fmt.Errorf("devices: %d devices need --device cpu or cuda (GPUs 0..%d), not %s", n, n-1, quoted(rf.device))
}

// openGPUs opens GPUs 0..N-1 and joins them with NCCL. NVLink multicast
// (NVLS) stays off unless the environment already says otherwise.
func openGPUs(rf *runFlags, stderr io.Writer) ([]backend.Backend, []backend.Collective, string, error) {
	n := rf.devices
	cf := rf.cuda
	opt := cf.options()
	have, err := cuda.DeviceCount(opt)
	if err != nil {
		return nil, nil, "", fmt.Errorf("devices: %w", err)
	}
	if have < n {
		return nil, nil, "", fmt.Errorf("devices: %d GPUs asked for, %d present", n, have)
	}
	if _, set := os.LookupEnv("NCCL_NVLS_ENABLE"); !set {
		os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
	nccl, err := cuda.LoadNCCL(cf.libDir)
	if err != nil {
		return nil, nil, "", fmt.Errorf("devices: several GPUs need NCCL: %w", err)
	}
	gpus := make([]*cuda.Backend, 0, n)
	fail := func(err error) ([]backend.Backend, []backend.Collective, string, error) {
		for _, g := range gpus {
			g.Close()
		}
		return nil, nil, "", err
	}
	for i := 0; i < n; i++ {
		o := opt
		o.Device = i
		g, err := cuda.New(o)
		if err != nil {
			return fail(fmt.Errorf("devices: GPU %d: %w", i, err))
		}
		gpus = append(gpus, g)
	}
	comms, err := nccl.NewComms(gpus)
	if err != nil {
		return fail(fmt.Errorf("devices: %w", err))
	}
	fmt.Fprintf(stderr, "NCCL %d joins %d GPUs\n", nccl.Version(), n)
	bes := make([]backend.Backend, n)
	colls := make([]backend.Collective, n)
	for i := range gpus {
		bes[i], colls[i] = gpus[i], comms[i]
	}
	return bes, colls, resolveMode(rf.mode, gpus[0]), nil
}
