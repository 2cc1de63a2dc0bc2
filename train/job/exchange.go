package job

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// placeExchanged spreads the feature rows over the job's ranks in hosts
// of perHost (--shard-features hosts): the vertices partitioned over the
// hosts, a host's dealt to its ranks in turn, the rows of the
// highest-degree vertices on every rank (the --replicate budget, counted
// in list bytes as for the topology), every other row fetched from the
// rank that holds it with all-to-alls. ranks are this process's; every
// process of the job makes the same call.
func (j *Job) placeExchanged(ds *dataset.Dataset, cfg train.Config, mode train.Mode, ranks []multigpu.Rank, perHost int) (*multigpu.Exchange, error) {
	dt, err := j.featureType()
	if err != nil {
		return nil, err
	}
	switch {
	case mode == train.Hybrid:
		return nil, fmt.Errorf("shard-features hosts: the hybrid mode keeps each device's rows in its own tiers")
	case cfg.FullEval:
		return nil, fmt.Errorf("shard-features hosts: --full-eval's layer-wise inference reads the whole table")
	case dt != backend.F32:
		return nil, fmt.Errorf("shard-features hosts: only float32 features are exchanged%s", widenHint(ds))
	}
	if err := multigpu.ExchangeFeatures(ds, ranks); err != nil {
		return nil, fmt.Errorf("shard-features hosts: %w", err)
	}
	world := ranks[0].Coll.Size()
	if perHost <= 0 || perHost > world {
		perHost = world
	}
	budget, err := ReplicateBytes(j.Placement.Replicate, 4*ds.Graph.NumEdges())
	if err != nil {
		return nil, err
	}
	if budget < 0 {
		budget = 4*ds.Graph.NumEdges() + 1
	}
	x, err := multigpu.PlaceExchanged(ds, ranks, perHost, graph.Replicated(ds.Graph, budget), !j.Placement.NoFeatureReuse)
	if err != nil {
		return nil, fmt.Errorf("shard-features hosts: %w", err)
	}
	if ranks[0].Coll.Rank() == 0 {
		fmt.Fprintf(j.Log, "features: spread over %d ranks in %d host(s) of %d and fetched with all-to-alls; the rows of %d highest-degree vertices on every rank; rows per rank:",
			world, world/perHost, perHost, len(x.Layout.Replicated))
		for _, b := range x.RowBytes {
			fmt.Fprintf(j.Log, " %.1f MiB", float64(b)/(1<<20))
		}
		fmt.Fprintf(j.Log, " (whole table %.1f MiB)\n", float64(tableSize(ds, backend.F32))/(1<<20))
	}
	return x, nil
}

// ExchangeReport is what the exchange moved per gather (a training step's
// or an evaluation batch's), added over the ranks counted.
type ExchangeReport struct {
	Ranks          int64   `json:"ranks_counted"`
	Own            float64 `json:"rows_own"`
	SameHost       float64 `json:"rows_same_host"`
	OtherHost      float64 `json:"rows_other_host"`
	Reused         float64 `json:"rows_reused"`
	LiveSameKiB    float64 `json:"live_kib_same_host"`
	LiveOtherKiB   float64 `json:"live_kib_other_host"`
	WireSameKiB    float64 `json:"wire_kib_same_host"`
	WireOtherKiB   float64 `json:"wire_kib_other_host"`
	GathersPerRank int64   `json:"gathers_per_rank"`
}

// ExchangeFigures turns counters into per-gather figures.
func ExchangeFigures(c featstore.ExchangeCounts) ExchangeReport {
	g := float64(max(c.Gathers, 1))
	lh, lo := c.LiveBytes()
	wh, wo := c.WireBytes()
	return ExchangeReport{Ranks: c.Ranks, Own: float64(c.Own) / g, SameHost: float64(c.Host) / g, OtherHost: float64(c.Other) / g,
		Reused: float64(c.Reused) / g, LiveSameKiB: float64(lh) / g / 1024, LiveOtherKiB: float64(lo) / g / 1024,
		WireSameKiB: float64(wh) / g / 1024, WireOtherKiB: float64(wo) / g / 1024, GathersPerRank: c.Gathers}
}

// printExchange says where the exchanged rows came from and the bytes
// moved per gather, by level: the rows asked for (live) and what the fixed
// chunks put on the wire.
func printExchange(x *multigpu.Exchange, log io.Writer) {
	if x == nil {
		return
	}
	c, err := x.Counts()
	if err != nil {
		fmt.Fprintf(log, "features: exchanged rows not counted: %v\n", err)
		return
	}
	r := ExchangeFigures(c)
	fmt.Fprintf(log, "features per gather (a training step or an evaluation batch; %d per rank; %d rank(s) counted): rows own %.0f, same host %.0f, other hosts %.0f, kept from the previous batch %.0f; bytes moved same host %.1f KiB (%.1f KiB on the wire), other hosts %.1f KiB (%.1f KiB on the wire)\n",
		r.GathersPerRank, r.Ranks, r.Own, r.SameHost, r.OtherHost, r.Reused, r.LiveSameKiB, r.WireSameKiB, r.LiveOtherKiB, r.WireOtherKiB)
	if c.Overflow > 0 {
		fmt.Fprintf(log, "features: %d rows did not fit their chunks; those gathers (or steps) ran again once the chunks grew, so no step used them\n", c.Overflow)
	}
}
