package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// devicesReport is bench --devices' line for one device count.
type devicesReport struct {
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
	Exchange *exchangeReport `json:"exchange,omitempty"`
}

// parseDeviceCounts reads --devices for bench: "2", "1,2,4" or "all" (every
// GPU, or one CPU device per two cores).
func parseDeviceCounts(s string, all func() (int, error)) ([]int, error) {
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
			return nil, fmt.Errorf("devices: %s, want counts such as 1,2,4 or all", quoted(s))
		}
		out = append(out, n)
	}
	return out, nil
}

// benchDevices trains --epochs epochs data-parallel on each device count
// and prints their epoch times and the speed-up over the first count.
func benchDevices(ctx context.Context, rf *runFlags, counts []int, ds *dataset.Dataset, cfg train.Config, asJSON bool, stdout, stderr io.Writer) error {
	fdt, err := rf.featureType()
	if err != nil {
		return err
	}
	if err := checkShardFeatures(rf.shardFeatures); err != nil {
		return err
	}
	var base float64
	one := cfg
	for _, n := range counts {
		cfg := one
		if err := rf.groupBatch(&cfg, n, stderr); err != nil {
			return err
		}
		rf.fitBatch(&cfg, ds, n, stderr)
		steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
		r := *rf
		r.devices = n
		bes, colls, mode, err := openDevices(&r, stderr)
		if err != nil {
			return err
		}
		ranks := make([]multigpu.Rank, n)
		for i := range ranks {
			ranks[i] = multigpu.Rank{Backend: bes[i], Coll: colls[i], Options: train.Options{FeatureDType: fdt}}
		}
		var rep devicesReport
		fmt.Fprintf(stderr, "measuring %d epochs of %s on %d x %s, %s mode\n", cfg.Epochs, ds.Name, n, bes[0].Name(), mode)
		topo, err := placeTopology(rf, ds, ranks, stderr)
		var feats *multigpu.Features
		var xch *multigpu.Exchange
		switch {
		case err == nil && rf.shardFeatures == "hosts":
			xch, err = placeExchanged(rf, ds, cfg, mode, ranks, rf.ranksPerHost, stderr)
		case err == nil:
			feats, err = placeFeatures(rf, ds, cfg, mode, ranks, topo, stderr)
		}
		var sum *train.Summary
		if err == nil {
			sum, err = multigpu.Run(ctx, ds, cfg, ranks, mode == "replay", rf.replay())
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
				f := exchangeFigures(c)
				rep.Exchange = &f
			}
		}
		feats.Free()
		for i := range bes {
			colls[i].Close()
			closeBackend(bes[i])
		}
		if err != nil {
			return err
		}
		rep.Preset, rep.Device, rep.Devices, rep.Mode, rep.Epochs = ds.Name, rf.device, n, mode, sum.Epochs
		rep.EpochS, rep.TestAcc, rep.Date = sum.Seconds/float64(max(sum.Epochs, 1)), sum.TestAcc, time.Now().UTC().Format(time.DateOnly)
		rep.StepsPerS = float64(steps) / rep.EpochS
		if base == 0 {
			base = rep.EpochS
		}
		rep.Speedup = base / rep.EpochS
		if asJSON {
			b, _ := json.Marshal(rep)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		fmt.Fprintf(stdout, "%d device(s): epoch %.3f s (mean of %d, training only), %.1f steps/s, speed-up %.2fx, test accuracy %.4f\n",
			n, rep.EpochS, rep.Epochs, rep.StepsPerS, rep.Speedup, rep.TestAcc)
		if rep.Cut > 0 {
			fmt.Fprintf(stdout, "  partition: edge cut %.3f, balance %.3f; lists read %.1f%% locally, %.1f%% from replicas, %.1f%% from peers\n",
				rep.Cut, rep.Balance, 100*rep.Local, 100*rep.Replica, 100*rep.Remote)
		}
		if rep.FeatureBytes > 0 {
			fmt.Fprintf(stdout, "  features: sharded, at most %.1f MiB of rows per device; rows gathered %.1f%% locally, %.1f%% from replicas, %.1f%% from peers, %.1f%% kept from the previous batch\n",
				float64(rep.FeatureBytes)/(1<<20), 100*rep.FeatureLocal, 100*rep.FeatureReplica, 100*rep.FeatureRemote, 100*rep.FeatureReused)
		}
		if x := rep.Exchange; x != nil {
			fmt.Fprintf(stdout, "  features exchanged, per step (all ranks): rows own %.0f, same host %.0f, other hosts %.0f, kept %.0f; same host %.1f KiB (%.1f KiB on the wire), other hosts %.1f KiB (%.1f KiB on the wire)\n",
				x.Own, x.SameHost, x.OtherHost, x.Reused, x.LiveSameKiB, x.WireSameKiB, x.LiveOtherKiB, x.WireOtherKiB)
		}
	}
	return nil
}
