package job

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// DevicesReport is what bench --devices measured of one device count
// (its --json line).
type DevicesReport struct {
	Preset    string  `json:"preset"`
	Device    string  `json:"device"`
	Devices   int     `json:"devices"`
	Mode      string  `json:"mode"`
	Epochs    int     `json:"epochs"`
	EpochS    float64 `json:"epoch_s"` // mean training time of an epoch (the first, with its capture, included)
	StepsPerS float64 `json:"steps_per_s"`
	Speedup   float64 `json:"speedup"` // over the first device count measured
	TestAcc   float64 `json:"test_acc"`
	Date      string  `json:"date"`
	// With the graph partitioned (--replicate): the partition, and the
	// shares of sampled lists read locally, from replicas and from peers.
	Cut     float64 `json:"edge_cut,omitempty"`
	Balance float64 `json:"balance,omitempty"`
	Local   float64 `json:"local_reads,omitempty"`
	Replica float64 `json:"replica_reads,omitempty"`
	Remote  float64 `json:"remote_reads,omitempty"`
	// With the feature rows sharded (--shard-features): the bytes of rows
	// the largest shard holds, and the shares of gathered rows by where
	// they lived.
	FeatureBytes   int64   `json:"feature_bytes_per_device,omitempty"`
	FeatureLocal   float64 `json:"feature_local_rows,omitempty"`
	FeatureReplica float64 `json:"feature_replica_rows,omitempty"`
	FeatureRemote  float64 `json:"feature_remote_rows,omitempty"`
	FeatureReused  float64 `json:"feature_reused_rows,omitempty"` // kept from the previous batch, not read from the peer again
	// With --shard-features hosts: rows and bytes per gather by level.
	Exchange *ExchangeReport `json:"exchange,omitempty"`
}

// ParseDeviceCounts reads --devices for bench: "2", "1,2,4" or "all" (every
// GPU, or one CPU device per two cores).
func ParseDeviceCounts(s string, all func() (int, error)) ([]int, error) {
	if s == "all" {
		n, err := all()
		if err != nil {
			return nil, fmt.Errorf("devices: %w", err)
		}
		return []int{n}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("devices: %s, want counts such as 1,2,4 or all", quote.Quote(s))
		}
		out = append(out, n)
	}
	return out, nil
}

// devices trains the configuration's epochs data-parallel on each device
// count and reports their epoch times and the speed-up over the first.
func (b *Bench) devices(ctx context.Context, counts []int, ds *dataset.Dataset) error {
	j := &b.Job
	cfg := j.Config
	fdt, err := j.featureType()
	if err != nil {
		return err
	}
	task, err := NewTask(cfg)
	if err != nil {
		return err
	}
	if err := CheckShardFeatures(j.Placement.ShardFeatures); err != nil {
		return err
	}
	var base float64
	one := cfg
	for _, n := range counts {
		cfg := one
		if err := j.groupBatch(&cfg, n, j.Log); err != nil {
			return err
		}
		j.fitBatch(&cfg, ds, n, j.Log)
		steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
		r := *j
		r.Devices = n
		bes, colls, mode, err := r.openDevices()
		if err != nil {
			return err
		}
		ranks := make([]multigpu.Rank, n)
		for i := range ranks {
			ranks[i] = multigpu.Rank{Backend: bes[i], Coll: colls[i], Options: train.Options{FeatureDType: fdt, Task: task}}
		}
		var rep DevicesReport
		fmt.Fprintf(j.Log, "measuring %d epochs of %s on %s, %s mode\n", cfg.Epochs, ds.Name, groupName(bes), mode)
		topo, err := j.placeTopology(ds, ranks, mode)
		var feats *multigpu.Features
		var xch *multigpu.Exchange
		switch {
		case err == nil && j.Placement.ShardFeatures == "hosts":
			xch, err = j.placeExchanged(ds, cfg, mode, ranks, j.Placement.RanksPerHost)
		case err == nil:
			feats, err = j.placeFeatures(ds, cfg, mode, ranks, topo)
		}
		var sum *train.Summary
		if err == nil {
			sum, err = multigpu.Run(ctx, ds, cfg, ranks, mode, j.Replay)
		}
		if err == nil && topo != nil {
			rep.Cut, rep.Balance = topo.Stats.Cut, topo.Stats.Balance
			if r, rerr := topo.Reads(); rerr == nil {
				rep.Local, rep.Replica, rep.Remote, _ = readShares(r)
			}
		}
		if err == nil && feats != nil {
			rep.FeatureBytes = slices.Max(feats.RowBytes)
			if r, rerr := feats.Reads(); rerr == nil {
				rep.FeatureLocal, rep.FeatureReplica, rep.FeatureRemote, rep.FeatureReused = readShares(r)
			}
		}
		if err == nil && xch != nil {
			if c, cerr := xch.Counts(); cerr == nil {
				f := ExchangeFigures(c)
				rep.Exchange = &f
			}
		}
		feats.Free()
		for i := range bes {
			colls[i].Close()
			CloseBackend(bes[i])
		}
		if err != nil {
			return err
		}
		rep.Preset, rep.Device, rep.Devices, rep.Mode, rep.Epochs = ds.Name, j.Device, n, mode.String(), sum.Epochs
		rep.EpochS, rep.TestAcc, rep.Date = sum.Seconds/float64(max(sum.Epochs, 1)), sum.Test[train.MetricAcc], time.Now().UTC().Format(time.DateOnly)
		rep.StepsPerS = float64(steps) / rep.EpochS
		if base == 0 {
			base = rep.EpochS
		}
		rep.Speedup = base / rep.EpochS
		if err := b.OnDevices(rep); err != nil {
			return err
		}
	}
	return nil
}
