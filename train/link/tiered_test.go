package link

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// TestTieredMatchesWhole: a trainer whose rows come from a tiered store,
// part in the cache (the highest degrees) and the rest read from host
// memory, trains bit for bit as one with the whole table, eager and
// replayed; both tiers were read, and the sizer heard the row's bytes and
// the rows in all.
func TestTieredMatchesWhole(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	for _, replay := range []bool{false, true} {
		whole, wp := trainLink(t, record.New(cpu.New(2)), ds, cfg, replay)
		var heard [2]int64
		tr, store, err := NewTiered(record.New(cpu.New(2)), ds, cfg, func(resident, rowBytes, rows int64) (int64, error) {
			heard = [2]int64{rowBytes, rows}
			return rows * 2 / 5, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		s, tp := runTrainer(t, tr, replay)
		host, all, err := store.Stats()
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		if heard != [2]int64{int64(4 * ds.FeatDim), ds.Graph.NumNodes} || store.CachedRows() != int(ds.Graph.NumNodes)*2/5 {
			t.Errorf("sizer heard %v, cache %d rows; want [%d %d] and %d", heard, store.CachedRows(), 4*ds.FeatDim, ds.Graph.NumNodes, ds.Graph.NumNodes*2/5)
		}
		if !(host > 0 && host < all) {
			t.Errorf("replay %v: %d of %d rows read from host memory, want some and not all", replay, host, all)
		}
		for e := range s.Epochs {
			if s.Epochs[e].Loss != whole.Epochs[e].Loss {
				t.Errorf("replay %v epoch %d: loss %v tiered, %v whole", replay, e+1, s.Epochs[e].Loss, whole.Epochs[e].Loss)
			}
		}
		for i := range wp {
			if !slices.Equal(wp[i], tp[i]) {
				t.Fatalf("replay %v: tensor %d differs between the tiered and the whole table", replay, i)
			}
		}
	}
}
