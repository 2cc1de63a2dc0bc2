package link

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
)

// tiered trains cfg with its feature rows in a tiered store (the hybrid
// mode's: the highest-degree two fifths cached, the rest read from host
// memory) and returns what it gave and the rows read from host memory and
// in all.
func tiered(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config, mode train.Mode) (result, int64, int64) {
	t.Helper()
	store, err := featstore.NewTiered(be, ds.FeatureTable(), ds.FeatDim, graph.DegreeOrder(ds.Graph), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Fill(int(ds.Graph.NumNodes) * 2 / 5); err != nil {
		t.Fatal(err)
	}
	var host, all int64
	r := trainThen(t, be, ds, cfg, mode, train.Options{Features: store}, func(*train.Trainer) {
		if host, all, err = store.Stats(); err != nil { // before the trainer frees the store
			t.Fatal(err)
		}
	})
	return r, host, all
}

// TestTieredMatchesWhole: a link trainer whose rows come from a tiered
// store trains bit for bit as one with the whole table, eager and
// replayed, and both tiers were read.
func TestTieredMatchesWhole(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	for _, mode := range []train.Mode{train.Eager, train.Replay} {
		whole := trainLink(t, record.New(cpu.New(2)), ds, cfg, mode, train.Options{})
		r, host, all := tiered(t, record.New(cpu.New(2)), ds, cfg, mode)
		if !(host > 0 && host < all) {
			t.Errorf("%v: %d of %d rows read from host memory, want some and not all", mode, host, all)
		}
		for e := range whole.epochs {
			if r.epochs[e].Loss != whole.epochs[e].Loss {
				t.Errorf("%v epoch %d: loss %v tiered, %v whole", mode, e+1, r.epochs[e].Loss, whole.epochs[e].Loss)
			}
		}
		for i := range whole.params {
			if !slices.Equal(whole.params[i], r.params[i]) {
				t.Fatalf("%v: tensor %d differs between the tiered and the whole table", mode, i)
			}
		}
	}
}
