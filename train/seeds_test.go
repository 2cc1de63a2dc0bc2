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
