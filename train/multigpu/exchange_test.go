package multigpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// TestExchangedFeaturesMatchWhole: 4 CPU devices as 2 hosts of 2, the
// feature rows spread over them and fetched with all-to-alls, train tiny
// to bitwise the losses of the same devices each holding the whole table,
// in the replay driver (with and without reuse) and the eager one; the
// ranks' parameters stay equal; rows came from the rank itself, its host
// and the other host, and with reuse some were kept from the batch before.
func TestExchangedFeaturesMatchWhole(t *testing.T) {
	ds, cfg := tiny(t)
	for _, c := range []struct{ replay, reuse bool }{{true, true}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("replay=%v/reuse=%v", c.replay, c.reuse), func(t *testing.T) {
			want, _ := run(t, ds, cfg, 4, c.replay)
			var x *Exchange
			got, hashes, _ := runSummary(t, ds, cfg, 4, c.replay, func(ranks []Rank) {
				var err error
				if x, err = PlaceExchanged(ds, ranks, 2, featstore.HighestDegree(ds.Graph, 64), c.reuse); err != nil {
					t.Fatal(err)
				}
			})
			if !slices.Equal(got, want) {
				t.Fatalf("losses differ from the whole table's\n%v\n%v", got, want)
			}
			for r := 1; r < 4; r++ {
				if !slices.Equal(hashes[r], hashes[0]) {
					t.Fatalf("rank %d's parameters differ from rank 0's", r)
				}
			}
			checkExchangeCounts(t, x, c.reuse, true) // both drivers size tight chunks
		})
	}
}

// checkExchangeCounts checks that rows came from every level, that no gather
// overflowed its chunks unless they are tight (and grow), logs the
// bytes moved per step, live and on the wire, and with tight chunks holds
// the wire to 2.5x the live bytes.
func checkExchangeCounts(t *testing.T, x *Exchange, reuse, tight bool) {
	t.Helper()
	c, err := x.Counts()
	if err != nil {
		t.Fatal(err)
	}
	lh, lo := c.LiveBytes()
	wh, wo := c.WireBytes()
	g := float64(c.Gathers)
	t.Logf("per gather (4 ranks): rows own %.0f, same host %.0f, other host %.0f, reused %.0f; live KiB same host %.1f, other %.1f; wire KiB same host %.1f, other %.1f",
		float64(c.Own)/g, float64(c.Host)/g, float64(c.Other)/g, float64(c.Reused)/g, float64(lh)/g/1024, float64(lo)/g/1024, float64(wh)/g/1024, float64(wo)/g/1024)
	if c.Own == 0 || c.Host == 0 || c.Other == 0 || (c.Overflow != 0 && !tight) || (c.Reused > 0) != reuse {
		t.Errorf("counts %+v", c)
	}
	if tight && float64(wh+wo) > 2.5*float64(lh+lo) {
		t.Errorf("%d bytes on the wire for %d live", wh+wo, lh+lo)
	}
}

// TestExchangedFeaturesOverflow: an envelope far below the batches makes
// the replay driver grow it (the ranks agree on every growth, so their
// all-to-alls keep the same chunks, and the evaluation, which every rank
// runs, grows it too); chunks far below what a gather asks of a peer make
// the step flagged on every rank, skipped, and re-run after the chunks grow
// (on the observed envelope and on the small one); training still gives
// the whole table's losses, bitwise.
func TestExchangedFeaturesOverflow(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 1
	want, _ := run(t, ds, cfg, 4, true)
	small := []nn.Caps{{Dst: 150, Edges: 150, Src: 200}, {Dst: cfg.Batch / 4, Edges: 100, Src: 150}}
	for _, c := range []struct {
		name string
		opt  train.ReplayOptions
	}{
		{"envelope", train.ReplayOptions{Caps: small, Margin: 1.01}},
		{"chunks", train.ReplayOptions{Chunk: 20}},
		{"both", train.ReplayOptions{Caps: small, Margin: 1.01, Chunk: 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var x *Exchange
			got, _, _ := runWith(t, ds, cfg, 4, true, c.opt, func(ranks []Rank) {
				var err error
				if x, err = PlaceExchanged(ds, ranks, 2, nil, true); err != nil {
					t.Fatal(err)
				}
			})
			if !slices.Equal(got, want) {
				t.Fatalf("losses differ from the whole table's\n%v\n%v", got, want)
			}
			n, err := x.Counts()
			if err != nil {
				t.Fatal(err)
			}
			if c.opt.Chunk > 0 && (n.Overflow == 0 || n.ChunkRows <= int64(c.opt.Chunk)*n.Gathers*n.Ranks) {
				t.Errorf("the chunks did not overflow and grow: %+v", n)
			}
			if c.opt.Chunk == 0 && n.ChunkRows <= int64(small[0].Src)*n.Gathers*n.Ranks/2 {
				t.Errorf("the chunks did not grow: %+v", n)
			}
			checkExchangeCounts(t, x, true, c.opt.Chunk > 0)
		})
	}
}
