package train

import "github.com/fanout-gnn/fanout/rng"

// shuffleStream is the Philox stream that orders training seeds.
const shuffleStream = 250

// Shuffle returns ids as int32 in an order that depends only on seed and
// epoch (Fisher-Yates driven by Philox).
func Shuffle(ids []int64, seed uint64, epoch int) []int32 {
	out := make([]int32, len(ids))
	for i, v := range ids {
		out[i] = int32(v)
	}
	k := rng.Key{Seed: seed, Epoch: uint32(epoch), Stream: shuffleStream}
	for i := len(out) - 1; i > 0; i-- {
		w := k.Words(uint32(i), 0)
		j := int(rng.Uniform(w[0], uint32(i+1)))
		out[i], out[j] = out[j], out[i]
	}
	return out
}
