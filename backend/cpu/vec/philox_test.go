package vec

import (
	"testing"

	"github.com/fanout-gnn/fanout/rng"
)

// TestPhiloxWords requires PhiloxWords to equal rng.Key.Words for lengths
// around the 8-slot groups and slot numbers that wrap.
func TestPhiloxWords(t *testing.T) {
	keys := []rng.Key{
		{Seed: 0, Epoch: 0, Step: 0, Stream: 0},
		{Seed: 0x0123456789abcdef, Epoch: 7, Step: 123456, Stream: 130},
		{Seed: ^uint64(0), Epoch: 1 << 23, Step: ^uint32(0), Stream: 255},
	}
	for _, k := range keys {
		pk := k.PhiloxKey()
		for _, slots := range []int{0, 1, 7, 8, 9, 16, 25, 64} {
			for _, slot0 := range []uint32{0, 5, ^uint32(0) - 3} {
				out := make([]uint32, 4*slots)
				index := uint32(slots*31 + 7)
				PhiloxWords(pk, index, slot0, k.Step, k.Epoch<<8|k.Stream, out)
				for s := range slots {
					want := k.Words(index, slot0+uint32(s))
					for w := range 4 {
						if out[4*s+w] != want[w] {
							t.Fatalf("key %+v slot0 %d: slot %d word %d = %08x, want %08x", k, slot0, s, w, out[4*s+w], want[w])
						}
					}
				}
			}
		}
	}
}

func BenchmarkPhiloxWords64(b *testing.B) {
	out := make([]uint32, 256)
	for b.Loop() {
		PhiloxWords([2]uint32{1, 2}, 3, 0, 4, 5, out)
	}
	b.ReportMetric(64*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mblocks/s")
}
