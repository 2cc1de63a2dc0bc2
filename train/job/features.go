package job

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// CheckShardFeatures checks --shard-features.
func CheckShardFeatures(s string) error {
	switch s {
	case "", "auto", "on", "off", "hosts":
		return nil
	}
	return fmt.Errorf("shard-features: %s, want auto, on, off or hosts", quote.Quote(s))
}

// placeFeatures decides where the feature rows live with several devices
// (--shard-features) and says so: sharded over the devices as the topology
// (the graph's partition and replicas; with no topology, a partition made
// here), each device reading its peers' rows in place, or the whole table
// on every device. auto shards only when the table does not fit a device
// with room for the step (on CPU devices it replicates). Sharding is not
// possible with the hybrid mode's tiers, layer-wise inference
// (--full-eval) or bfloat16 features: on is then an error, auto
// replicates. When the devices cannot read each other's memory, on is an
// error and auto replicates, said once. The result is nil when every
// device holds the whole table.
func (j *Job) placeFeatures(ds *dataset.Dataset, cfg train.Config, mode train.Mode, ranks []multigpu.Rank, topo *multigpu.Topology) (*multigpu.Features, error) {
	if len(ranks) < 2 {
		return nil, nil
	}
	dt, err := j.featureType()
	if err != nil {
		return nil, err
	}
	tableBytes := tableSize(ds, dt)
	whole := func(why string) (*multigpu.Features, error) {
		fmt.Fprintf(j.Log, "features: the whole table (%.1f MiB) on every device (%s)\n", float64(tableBytes)/(1<<20), why)
		return nil, nil
	}
	on := j.Placement.ShardFeatures == "on"
	var cannot string
	switch {
	case mode == train.Hybrid:
		cannot = "the hybrid mode keeps each device's rows in its own tiers"
	case cfg.FullEval:
		cannot = "--full-eval's layer-wise inference reads the whole table"
	case dt != backend.F32:
		cannot = "only float32 features are sharded" + widenHint(ds)
	}
	switch {
	case j.Placement.ShardFeatures == "off":
		return whole("--shard-features off")
	case cannot != "" && on:
		return nil, fmt.Errorf("shard-features: %s", cannot)
	case cannot != "":
		return whole(cannot)
	case !on:
		budgets := j.featureBudgets(ds, ranks, topo)
		if !multigpu.ShardFeatures(tableBytes, budgets) {
			if budgets[0] < 0 {
				return whole("CPU devices share the host's memory")
			}
			return whole("it fits each device with room for the step")
		}
	}
	var owner, replicated []int32
	if topo != nil {
		owner, replicated = topo.Owner, topo.Replicated
	}
	f, err := multigpu.PlaceFeatures(ds, ranks, owner, replicated)
	if err != nil {
		if on {
			return nil, fmt.Errorf("shard-features: %w", err)
		}
		return whole(err.Error())
	}
	how := "as the topology"
	if topo == nil {
		how = "by a partition of the graph"
	}
	fmt.Fprintf(j.Log, "features: sharded over %d devices %s, the rows of %d replicated vertices on every device; rows per device:", len(ranks), how, len(replicated))
	for _, b := range f.RowBytes {
		fmt.Fprintf(j.Log, " %.1f MiB", float64(b)/(1<<20))
	}
	fmt.Fprintf(j.Log, " (whole table %.1f MiB)\n", float64(tableBytes)/(1<<20))
	if !j.Placement.NoFeatureReuse {
		f.Reuse(ranks)
	}
	return f, nil
}

// widenHint says, for a bfloat16 dataset, how to have float32 rows.
func widenHint(ds *dataset.Dataset) string {
	if ds.FeatureDType() != backend.BF16 {
		return ""
	}
	return "; the dataset's are bfloat16: --feature-dtype float32 widens them, 4 bytes a value"
}

// featureBudgets are the bytes of features each device may hold: a
// quarter of its memory (--gpu-memory, or what it has free) kept for the
// step, less its topology (its lists and pointer table, already resident
// when the graph is partitioned, or the whole graph), labels and degrees.
// -1 for a device that cannot say (the CPU).
func (j *Job) featureBudgets(ds *dataset.Dataset, ranks []multigpu.Rank, topo *multigpu.Topology) []int64 {
	n := ds.Graph.NumNodes
	out := make([]int64, len(ranks))
	for i, r := range ranks {
		avail, budget, ok := j.deviceMemory(r.Backend)
		if !ok {
			out[i] = -1
			continue
		}
		graphBytes := topologyBytes(ds)
		if topo != nil {
			graphBytes = 0 // resident: not in what the device has free
			if budget {
				graphBytes = topo.ListBytes[i] + 12*n
			}
		}
		out[i] = dataRoom(avail) - graphBytes - 8*n
	}
	return out
}

// printFeatureReads says where the gathered feature rows lived.
func printFeatureReads(f *multigpu.Features, rowBytes int64, log io.Writer) {
	if f == nil {
		return
	}
	r, err := f.Reads()
	if err != nil {
		fmt.Fprintf(log, "features: rows not counted: %v\n", err)
		return
	}
	l, rep, rem, reu := readShares(r)
	fmt.Fprintf(log, "gathered %d feature rows (training and evaluation): %.1f%% local, %.1f%% replicas, %.1f%% read from peers, %.1f%% kept from the previous batch (%.1f MiB not read again)\n",
		r.Local+r.Replica+r.Remote+r.Reused, 100*l, 100*rep, 100*rem, 100*reu, float64(r.Reused)*float64(rowBytes)/(1<<20))
}

// ShardsFeatures reports whether shard-features auto shards ds's float32
// rows over devices of mem bytes each: when the table does not fit one
// with room for the step, beside the whole topology.
func ShardsFeatures(ds *dataset.Dataset, mem int64) bool {
	budget := dataRoom(mem) - topologyBytes(ds) - 8*ds.Graph.NumNodes
	return multigpu.ShardFeatures(tableSize(ds, backend.F32), []int64{budget})
}
