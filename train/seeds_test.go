package train

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
)

// The kept and background-shuffled epochs give the seeds a fresh shuffle
// gives, in any order of asking (an envelope growth asks for the current
// epoch again, a resumed run starts past the prepared one).
func TestEpochSeedsKeptAndPrepared(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 4
	tr, err := New(cpu.New(1), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, e := range []int{0, 0, 1, 3, 2, 3, 1} {
		got, steps := tr.epochSeeds(e)
		if want := Shuffle(ds.Train, cfg.Seed, e); !slices.Equal(got, want) {
			t.Fatalf("epoch %d: seeds differ from the epoch's shuffle", e)
		}
		if want := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch; steps != want {
			t.Fatalf("epoch %d: %d steps, want %d", e, steps, want)
		}
		if prepared := tr.seeds.next != nil; prepared != (e+1 < cfg.Epochs) {
			t.Fatalf("after epoch %d: next epoch prepared %v", e, prepared)
		}
	}
}

// The ranks' shares of an order, step by step, put back together are the
// order; RankShareLen counts each share without making it.
func TestRankShareTilesTheOrder(t *testing.T) {
	for _, c := range []struct{ n, batch, size int }{{10, 4, 2}, {11, 6, 3}, {7, 8, 4}, {5, 4, 1}} {
		order := make([]int32, c.n)
		for i := range order {
			order[i] = int32(100 + i)
		}
		shares := make([][]int32, c.size)
		for r := range shares {
			shares[r] = RankShare(order, c.batch, r, c.size)
			if got := RankShareLen(c.n, c.batch, r, c.size); got != len(shares[r]) {
				t.Fatalf("%+v rank %d: RankShareLen %d, share of %d", c, r, got, len(shares[r]))
			}
		}
		var back []int32
		b := c.batch / c.size
		for s := 0; s*c.batch < c.n; s++ {
			for r := range shares {
				back = append(back, shares[r][min(len(shares[r]), s*b):min(len(shares[r]), (s+1)*b)]...)
			}
		}
		if !slices.Equal(back, order) {
			t.Fatalf("%+v: shares put back %v, want %v", c, back, order)
		}
	}
}

// Closing a trainer waits for the shuffle it started in the background,
// which reads the training split (memory a closed dataset unmaps): a run
// stopped early leaves one behind.
func TestCloseWaitsForTheNextShuffle(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 3
	tr, err := New(cpu.New(1), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.epochSeeds(0)
	if tr.seeds.next == nil {
		t.Fatal("no shuffle of epoch 2 in the background")
	}
	tr.Close()
	if tr.seeds.next != nil {
		t.Fatal("Close left the background shuffle running")
	}
}
