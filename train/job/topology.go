package job

import (
	"fmt"
	"github.com/fanout-gnn/fanout/train"
	"io"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// DefaultReplicate is --replicate's default: auto, the whole graph on
// every device where it fits (placeTopology), else partitioned with
// autoFraction of the list bytes replicated.
const DefaultReplicate = "auto"

// autoFraction is the share of the list bytes that auto replicates on
// every device when it partitions (and where no devices are weighed: the
// simulation, the replicated rows of --shard-features hosts).
const autoFraction = 0.1

// ReplicateBytes reads --replicate for g: "all" (-1: the whole graph on
// every device, no partition), a fraction of the graph's list bytes (a
// number up to 1), a size (512MiB, 2GiB, bytes), or auto (and empty):
// autoFraction of the list bytes, the budget auto partitions with.
func ReplicateBytes(s string, listBytes int64) (int64, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "", "auto":
		return int64(autoFraction * float64(listBytes)), nil
	case "all":
		return -1, nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		// A plain number is a fraction (a size has a unit: 512MiB, or
		// bytes written as such, 2B).
		if !(f >= 0 && f <= 1) {
			return 0, fmt.Errorf("replicate: %s is a number outside [0, 1]; give a fraction of the lists' bytes, a size with a unit (512MiB), auto or all", quote.Quote(s))
		}
		return int64(f * float64(listBytes)), nil
	}
	b, err := ParseSize(t)
	if err != nil {
		return 0, fmt.Errorf("replicate: %s is not auto, all, a fraction in [0, 1] or a size (e.g. 512MiB)", quote.Quote(s))
	}
	return b, nil
}

// wholeGraphFits says whether --replicate auto keeps the whole graph on
// every device: each can say its free memory (--gpu-memory, where given,
// stands for it) and the dataset resident whole (features as the job holds
// them, topology, labels and degrees) fits each with room for the step.
// The whole graph was faster than the partition on two and four H100s
// (products-sim: 1.88x one GPU against 1.84x, 3.60x against 3.44x;
// docs/perf.md); the partition is for graphs that do not fit. Devices
// that cannot say (CPU devices, which stand for GPUs in tests) partition,
// and so do the modes whose groups were measured only partitioned: the
// hybrid mode, and features sharded on purpose (--shard-features on or
// hosts), where --replicate all still asks for the whole graph.
func (j *Job) wholeGraphFits(ds *dataset.Dataset, ranks []multigpu.Rank, mode train.Mode) (need int64, fits bool) {
	if t := strings.TrimSpace(j.Placement.Replicate); t != "" && t != "auto" {
		return 0, false
	}
	if sf := j.Placement.ShardFeatures; mode == train.Hybrid || sf == "on" || sf == "hosts" {
		return 0, false
	}
	dt, err := j.featureType()
	if err != nil {
		return 0, false
	}
	need = dataBytes(ds, dt)
	for _, r := range ranks {
		if mem, _, ok := j.deviceMemory(r.Backend); !ok || need > dataRoom(mem) {
			return need, false
		}
	}
	return need, true
}

// placeTopology spreads the graph over the ranks (--replicate), or leaves
// the whole graph on each when asked to, when auto finds it fits
// (wholeGraphFits) or when the devices cannot read each other's memory
// (said once). The topology is nil then.
func (j *Job) placeTopology(ds *dataset.Dataset, ranks []multigpu.Rank, mode train.Mode) (*multigpu.Topology, error) {
	if len(ranks) < 2 {
		return nil, nil
	}
	if need, ok := j.wholeGraphFits(ds, ranks, mode); ok {
		fmt.Fprintf(j.Log, "topology: the whole graph on every device (--replicate auto: the dataset, %.1f MiB resident, fits each with room for the step)\n", float64(need)/(1<<20))
		return nil, nil
	}
	listBytes := 4 * ds.Graph.NumEdges()
	budget, err := ReplicateBytes(j.Placement.Replicate, listBytes)
	if err != nil || budget < 0 {
		return nil, err
	}
	topo, err := multigpu.PlaceTopology(ds, ranks, budget)
	if err != nil {
		fmt.Fprintf(j.Log, "topology: %v; every device holds the whole graph instead\n", err)
		for i := range ranks {
			ranks[i].Options.Graph = nil
		}
		return nil, nil
	}
	st := topo.Stats
	fmt.Fprintf(j.Log, "topology: %d parts (edge cut %.3f, balance %.3f), the lists of the %d highest-degree vertices (%.1f MiB) on every device; lists per device:",
		len(ranks), st.Cut, st.Balance, len(topo.Replicated), float64(min(budget, listBytes))/(1<<20))
	for _, b := range topo.ListBytes {
		fmt.Fprintf(j.Log, " %.1f MiB", float64(b)/(1<<20))
	}
	fmt.Fprintf(j.Log, " (whole graph %.1f MiB)\n", float64(listBytes)/(1<<20))
	return topo, nil
}

// printReads says where the sampled lists lived.
func printReads(topo *multigpu.Topology, log io.Writer) {
	if topo == nil {
		return
	}
	r, err := topo.Reads()
	if err != nil {
		fmt.Fprintf(log, "topology: reads not counted: %v\n", err)
		return
	}
	l, rep, rem, _ := readShares(r)
	fmt.Fprintf(log, "sampling read %d neighbour lists (training and evaluation): %.1f%% local, %.1f%% replicas, %.1f%% from peers\n",
		r.Lists(), 100*l, 100*rep, 100*rem)
}

// readShares are the fractions of reads (lists or rows) by where they
// were read: locally, from replicas, from peers, or from the rows kept
// from the previous batch.
func readShares(r backend.ReadCounts) (local, replica, remote, reused float64) {
	total := float64(max(1, r.Local+r.Replica+r.Remote+r.Reused))
	return float64(r.Local) / total, float64(r.Replica) / total, float64(r.Remote) / total, float64(r.Reused) / total
}
