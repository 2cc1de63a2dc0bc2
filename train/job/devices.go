package job

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/hybrid"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// runDevices trains data-parallel on j.Devices devices (train --devices).
// CPU devices are CPU backends in this process, joined by the in-process
// collective; their threads split --threads.
func runDevices(ctx context.Context, j *Job) (*train.Summary, error) {
	cfg, opt := j.Config, j.Options
	n := j.Devices
	if err := j.groupBatch(&cfg, n, j.Log); err != nil {
		return nil, err
	}
	bes, colls, mode, err := j.openDevices()
	if err != nil {
		return nil, err
	}
	defer func() {
		for i := range bes {
			colls[i].Close()
			CloseBackend(bes[i])
		}
	}()
	ds, err := j.load()
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	// Loading fitted the model to the dataset (a typed one's default, prepareTyped).
	cfg.Model, cfg.BottomProducts = j.Config.Model, j.Config.BottomProducts
	if items, unit := trainItems(cfg, ds); n > items {
		return nil, fmt.Errorf("devices: %d devices, but the training split has %d %s: give at most %d (each device takes at least one a step)", n, items, unit, items)
	}
	j.fitBatch(&cfg, ds, n, j.Log)
	if err := checkMemory(bes[0], cfg, ds, n); err != nil {
		return nil, err
	}
	if ctx.Err() != nil { // a signal while the devices opened and the data loaded
		return nil, j.stoppedBeforeTraining()
	}
	desc := groupName(bes)
	fmt.Fprintf(j.Log, "training %s on %s with %s, %s mode (global batch %d = %d x %d)\n",
		describeRun(cfg), ds.Name, desc, mode, cfg.Batch, n, cfg.Batch/n)
	ranks := make([]multigpu.Rank, n)
	opt.Device = desc
	for i := range ranks {
		ranks[i] = multigpu.Rank{Backend: bes[i], Coll: colls[i], Options: train.Options{Device: desc, FeatureDType: opt.FeatureDType}}
		if i == 0 {
			ranks[0].Options = opt
		}
		if err := j.taskOptions(&ranks[i].Options); err != nil {
			return nil, err
		}
	}
	var tiers []*hybrid.Tier
	if mode == train.Hybrid {
		if tiers, err = j.hybridRanks(ds, cfg, bes, ranks); err != nil {
			return nil, err
		}
	}
	if ds.Typed() {
		// Every rank uploads every relation and feature table itself.
		fmt.Fprintf(j.Log, "placement: %s is typed: every relation and feature table on every device\n", ds.Name)
		return j.runTyped(ctx, ds, cfg, ranks, mode)
	}
	topo, err := j.placeTopology(ds, ranks, mode)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil { // a signal while the topology was placed
		return nil, j.stoppedBeforeTraining()
	}
	var feats *multigpu.Features
	var xch *multigpu.Exchange
	if j.Placement.ShardFeatures == "hosts" {
		xch, err = j.placeExchanged(ds, cfg, mode, ranks, j.Placement.RanksPerHost)
	} else {
		feats, err = j.placeFeatures(ds, cfg, mode, ranks, topo)
	}
	if err != nil {
		return nil, err
	}
	defer feats.Free() // after every rank is done, before the devices close
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, mode, j.Replay)
	if err != nil {
		return nil, j.interrupted(err)
	}
	printReads(topo, j.Log)
	printFeatureReads(feats, 4*int64(ds.FeatDim), j.Log)
	printExchange(xch, j.Log)
	for i, t := range tiers {
		printTier(j.Log, fmt.Sprintf("device %d", i), t)
	}
	return sum, nil
}

// runTyped trains a typed graph on the group's ranks, each holding the
// whole dataset (no placement of topology or features yet; loading refused
// features spread over hosts, prepareTyped).
func (j *Job) runTyped(ctx context.Context, ds *dataset.Dataset, cfg train.Config, ranks []multigpu.Rank, mode train.Mode) (*train.Summary, error) {
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, mode, j.Replay)
	if err != nil {
		return nil, j.interrupted(err)
	}
	return sum, nil
}

// printTier says how a device's tiered store served its run.
func printTier(log io.Writer, who string, t *hybrid.Tier) {
	fmt.Fprintf(log, "hybrid (%s): cache %d rows, hit rate %.3f, peak %.1f MiB of a %.1f MiB budget\n",
		who, t.Stats.Placement.CacheRows, t.Stats.HitRate, float64(t.Stats.PeakBytes)/(1<<20), float64(t.Stats.Placement.Budget)/(1<<20))
}

// hybridRanks gives every rank its own tiered feature store under its
// device's budget (--gpu-memory applies per device).
func (j *Job) hybridRanks(ds *dataset.Dataset, cfg train.Config, bes []backend.Backend, ranks []multigpu.Rank) ([]*hybrid.Tier, error) {
	if j.Hybrid.HotRatio != 0 {
		return nil, fmt.Errorf("hot-ratio: CPU-computed hot vertices run on one device; with --devices %d use --hot-ratio 0", len(ranks))
	}
	tiers := make([]*hybrid.Tier, len(ranks))
	for i := range ranks {
		var log io.Writer
		if i == 0 {
			log = j.Log // one plan printed: the ranks' are alike
		}
		hopt, err := j.hybridOptions(bes[i], log)
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

// groupName describes a group's devices in rank order: one device by its
// name; devices whose names differ only in a leading ordinal
// ("cuda:1 NVIDIA H100 ...") as "cuda:0,1: 2 x NVIDIA H100 ..."; devices of
// one name as "2 x NAME"; others by every name.
func groupName(bes []backend.Backend) string {
	names := make([]string, len(bes))
	for i, be := range bes {
		names[i] = be.Name()
	}
	if len(names) == 1 {
		return names[0]
	}
	if kind, ords, model, ok := sameModel(names); ok {
		return fmt.Sprintf("%s:%s: %d x %s", kind, strings.Join(ords, ","), len(names), model)
	}
	if slices.Equal(names, slices.Repeat(names[:1], len(names))) {
		return fmt.Sprintf("%d x %s", len(names), names[0])
	}
	return strings.Join(names, "; ")
}

// sameModel splits names of the form "KIND:ORDINAL MODEL" that share KIND
// and MODEL into those and the ordinals; ok is false for any other names.
func sameModel(names []string) (kind string, ords []string, model string, ok bool) {
	for i, n := range names {
		k, r, found := strings.Cut(n, ":")
		o, m, spaced := strings.Cut(r, " ")
		if !found || !spaced || o == "" || strings.ContainsAny(k, " (") || (i > 0 && (k != kind || m != model)) {
			return "", nil, "", false
		}
		kind, model = k, m
		ords = append(ords, o)
	}
	return kind, ords, model, len(names) > 0
}
