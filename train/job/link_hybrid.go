package job

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train/link"
)

// newLinkHybrid makes the link trainer of the hybrid mode on be: the
// replay driver over a tiered feature store (link.NewTiered), its cache
// the highest-degree vertices' rows that the budget (--gpu-memory, or
// what the device has free less a margin) leaves once the trainer is
// built, or --cache-rows of them; the other rows are read from host
// memory in place. A link step's seeds are edge ends, so there are no hot
// vertices: --hot-ratio auto means none, and another ratio is refused.
//
// With a group, be is one rank's device (rank 0's says its plan; the
// others' are alike) and --gpu-memory applies to each device.
func newLinkHybrid(j Job, be backend.Backend, ds *dataset.Dataset, cfg link.Config, group backend.Collective) (*link.Trainer, *featstore.Tiered, error) {
	if !j.Hybrid.HotAuto && j.Hybrid.HotRatio != 0 {
		return nil, nil, fmt.Errorf("--hot-ratio %s: the hybrid mode of --task link has no hot vertices (its feature rows are tiered, its steps all on the device); give --hot-ratio 0", j.Hybrid.HotSpec)
	}
	var log io.Writer = j.Log
	if group != nil && group.Rank() != 0 {
		log = io.Discard
	}
	hopt, err := j.hybridOptions(be, log)
	if err != nil {
		return nil, nil, err
	}
	return link.NewSharedTiered(be, ds, cfg, group, func(resident, rowBytes, rows int64) (int64, error) {
		p, err := hopt.PlaceCache(resident, 0, rowBytes, rows)
		if err == nil {
			p.Print(log)
		}
		return p.CacheRows, err
	})
}

// printTierStats says how many feature rows the tiered store read from
// host memory; who names the device of a group's store ("" alone).
func printTierStats(j Job, store *featstore.Tiered, who string) error {
	host, rows, err := store.Stats()
	if err != nil {
		return err
	}
	fmt.Fprintf(j.Log, "hybrid%s: %d of %d feature rows gathered from host memory (cache hit rate %.4f), %.1f MiB over PCIe\n",
		who, host, rows, 1-float64(host)/float64(max(rows, 1)), float64(host)*float64(store.Dim()*store.DType().Size())/(1<<20))
	return nil
}
