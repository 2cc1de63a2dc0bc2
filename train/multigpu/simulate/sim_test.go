package simulate

import (
	"context"
	"errors"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// trainSteps trains cfg eagerly on n CPU devices for steps steps (then
// every rank stops, as on Ctrl-C, before any evaluation) after setup has
// placed the ranks' lists and rows.
func trainSteps(t *testing.T, ds *dataset.Dataset, cfg train.Config, n, steps int, setup func([]multigpu.Rank)) {
	t.Helper()
	bes, comms := traintest.CPUGroup(t, n, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ranks := make([]multigpu.Rank, n)
	for i := range ranks {
		ranks[i] = multigpu.Rank{Backend: bes[i], Coll: comms[i]}
	}
	ranks[0].Options.OnStep = func(epoch, step int, _ float32) {
		if epoch*1000+step+1 >= steps {
			cancel()
		}
	}
	setup(ranks)
	if _, err := multigpu.Run(ctx, ds, cfg, ranks, train.Eager, train.ReplayOptions{}); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("training for %d steps: %v", steps, err)
	}
}

// TestCountsMatchTraining: the lists and rows that simulate counts are the
// ones 4 CPU devices count when they train tiny for the same steps with
// the same flags and seed: the topology partitioned over the 4 devices
// with replicas, the rows sharded as the topology (with and without
// reuse), and the rows exchanged between 2 hosts of 2 (eager chunks).
func TestCountsMatchTraining(t *testing.T) {
	ds, cfg := traintest.Tiny(t)
	cfg.Batch = 4 * 32 // 32 seeds per device: 5 steps do not reach the epoch's end
	const steps = 5
	budget := int64(0.1 * float64(4*ds.Graph.NumEdges()))
	for _, c := range []struct {
		name   string
		hosts  int
		feat   Features
		reuse  bool
		budget int64
	}{
		{"sharded", 1, Peer, true, budget},
		{"sharded-no-reuse", 1, Peer, false, budget},
		{"replicate-none", 1, Peer, true, 0},
		{"exchanged", 2, Hosts, true, budget},
		{"exchanged-no-reuse", 2, Hosts, false, budget},
	} {
		t.Run(c.name, func(t *testing.T) {
			var topo *multigpu.Topology
			var feats *multigpu.Features
			var xch *multigpu.Exchange
			trainSteps(t, ds, cfg, 4, steps, func(ranks []multigpu.Rank) {
				var err error
				if topo, err = multigpu.PlaceTopology(ds, ranks, c.budget); err != nil {
					t.Fatal(err)
				}
				if c.feat == Peer {
					if feats, err = multigpu.PlaceFeatures(ds, ranks, topo.Owner, topo.Replicated); err != nil {
						t.Fatal(err)
					}
					if c.reuse {
						feats.Reuse(ranks)
					}
					return
				}
				if xch, err = multigpu.PlaceExchanged(ds, ranks, 2, graph.Replicated(ds.Graph, c.budget), c.reuse); err != nil {
					t.Fatal(err)
				}
			})
			defer feats.Free()
			res, err := Run(ds, Config{Hosts: c.hosts, Devices: 4 / c.hosts, TopoRanks: 4, Batch: cfg.Batch, Fanouts: cfg.Fanouts,
				Seed: cfg.Seed, Steps: steps, Replicate: c.budget, Features: c.feat, Reuse: c.reuse, Chunks: EagerChunks})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("simulate: %+v", res.Totals)
			lists, err := topo.Reads()
			if err != nil {
				t.Fatal(err)
			}
			if lists != res.Totals.Lists || lists.Remote == 0 {
				t.Errorf("lists: training counted %+v, simulate %+v", lists, res.Totals.Lists)
			}
			if feats != nil {
				rows, err := feats.Reads()
				if err != nil {
					t.Fatal(err)
				}
				if rows != res.Totals.Rows || rows.Remote == 0 || (rows.Reused > 0) != c.reuse {
					t.Errorf("rows: training counted %+v, simulate %+v", rows, res.Totals.Rows)
				}
			}
			if xch != nil {
				x, err := xch.Counts()
				if err != nil {
					t.Fatal(err)
				}
				if x != res.Totals.Exchange || x.Other == 0 || (x.Reused > 0) != c.reuse {
					t.Errorf("exchange: training counted %+v, simulate %+v", x, res.Totals.Exchange)
				}
			}
		})
	}
}
