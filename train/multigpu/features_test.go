package multigpu

import (
	"slices"
	"testing"
)

// TestShardedFeaturesMatchReplicated: with the feature rows sharded over 2
// and 4 CPU devices (each holding the rows of the vertices it owns and
// gathering the others from its peers through a row table), training in
// the replay driver gives bitwise the losses of the same devices each
// holding the whole table, alone and with the topology partitioned too;
// the ranks' parameters stay equal; the eager driver on 2 devices agrees
// as well. The gathers' counts show local and remote rows, replica rows
// exactly when the topology replicates some vertices, and the shards add
// up to the table (plus the replicas' copies).
func TestShardedFeaturesMatchReplicated(t *testing.T) {
	ds, cfg := tiny(t)
	tableBytes := int64(len(ds.Features)) * 4
	for _, n := range []int{2, 4} {
		for _, replay := range []bool{true, false} {
			if !replay && n != 2 {
				continue
			}
			want, _ := run(t, ds, cfg, n, replay)
			for _, withTopo := range []bool{false, true} {
				var feats *Features
				var topo *Topology
				got, hashes, _ := runSummary(t, ds, cfg, n, replay, func(ranks []Rank) {
					var owner, replicated []int32
					if withTopo {
						var err error
						if topo, err = PlaceTopology(ds, ranks, 1<<16); err != nil {
							t.Fatal(err)
						}
						owner, replicated = topo.Owner, topo.Replicated
					}
					var err error
					if feats, err = PlaceFeatures(ds, ranks, owner, replicated); err != nil {
						t.Fatal(err)
					}
				})
				if !slices.Equal(got, want) {
					t.Fatalf("%d devices (replay %t, topology %t): losses differ from replicated features'\n%v\n%v", n, replay, withTopo, got, want)
				}
				for r := 1; r < n; r++ {
					if !slices.Equal(hashes[r], hashes[0]) {
						t.Fatalf("%d devices: rank %d's parameters differ from rank 0's", n, r)
					}
				}
				reads, err := feats.Reads()
				if err != nil {
					t.Fatal(err)
				}
				var held int64
				for _, b := range feats.RowBytes {
					held += b
				}
				copies := int64(len(feats.Replicated)) * int64(n-1) * int64(ds.FeatDim) * 4
				t.Logf("%d devices (replay %t, topology %t): rows gathered local %d, replica %d, remote %d; %d replicated vertices; rows per device %v bytes",
					n, replay, withTopo, reads.Local, reads.Replica, reads.Remote, len(feats.Replicated), feats.RowBytes)
				if reads.Local == 0 || reads.Remote == 0 {
					t.Errorf("rows gathered: %+v, want local and remote rows", reads)
				}
				if (reads.Replica > 0) != (len(feats.Replicated) > 0) {
					t.Errorf("rows gathered: %+v with %d replicated vertices", reads, len(feats.Replicated))
				}
				if withTopo && !slices.Equal(feats.Owner, topo.Owner) {
					t.Errorf("the rows are not placed as the topology's lists")
				}
				if held != tableBytes+copies {
					t.Errorf("the shards hold %d bytes, want the table's %d and %d of copies", held, tableBytes, copies)
				}
				feats.Free()
			}
		}
	}
}

// TestShardFeaturesChoice: the whole table on every device when it fits
// every budget or a device cannot say, else sharded.
func TestShardFeaturesChoice(t *testing.T) {
	for _, c := range []struct {
		table   int64
		budgets []int64
		want    bool
	}{
		{100, []int64{200, 200}, false},
		{100, []int64{100, 100}, false},
		{100, []int64{200, 99}, true},
		{100, []int64{-1, -1}, false},
		{100, []int64{50, -1}, false},
	} {
		if got := ShardFeatures(c.table, c.budgets); got != c.want {
			t.Errorf("table %d, budgets %v: shard %t, want %t", c.table, c.budgets, got, c.want)
		}
	}
}

// TestShardedFeaturesReuse: with reuse, the remote rows a batch shares
// with the batch before are copied from the rows kept on the device, not
// read from the peer again: training is bitwise the same (the same rows),
// in the replay driver (kept rows sized from the envelope) and the eager
// one (from the first gather), and some rows were reused.
func TestShardedFeaturesReuse(t *testing.T) {
	ds, cfg := tiny(t)
	for _, replay := range []bool{true, false} {
		want, _ := run(t, ds, cfg, 2, replay)
		var feats *Features
		got, _, _ := runSummary(t, ds, cfg, 2, replay, func(ranks []Rank) {
			var err error
			if feats, err = PlaceFeatures(ds, ranks, nil, nil); err != nil {
				t.Fatal(err)
			}
			feats.Reuse(ranks)
		})
		if !slices.Equal(got, want) {
			t.Fatalf("replay %t: losses with reused rows differ from the whole table's", replay)
		}
		reads, err := feats.Reads()
		feats.Free()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("replay %t: rows local %d, remote %d, reused %d (%.1f%% of the peers' rows)", replay, reads.Local, reads.Remote, reads.Reused,
			100*float64(reads.Reused)/float64(reads.Remote+reads.Reused))
		if reads.Reused == 0 || reads.Remote == 0 || reads.Local == 0 {
			t.Errorf("replay %t: %+v", replay, reads)
		}
	}
}
