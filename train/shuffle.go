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
	shuffle(out, seed, epoch)
	return out
}

// ShuffleCount is Shuffle of the ids 0..n-1.
func ShuffleCount(n int, seed uint64, epoch int) []int32 {
	out := identity(n)
	shuffle(out, seed, epoch)
	return out
}

// identity is 0, 1, ..., n-1.
func identity(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// shuffleItems is Shuffle of a head's training items.
func shuffleItems(h Head, seed uint64, epoch int) []int32 {
	if items := h.Items(); items != nil {
		return Shuffle(items, seed, epoch)
	}
	return ShuffleCount(h.ItemCount(), seed, epoch)
}

// shuffle puts out in an order that depends only on seed and epoch.
func shuffle(out []int32, seed uint64, epoch int) {
	k := rng.Key{Seed: seed, Epoch: uint32(epoch), Stream: shuffleStream}
	for i := len(out) - 1; i > 0; i-- {
		w := k.Words(uint32(i), 0)
		j := int(rng.Uniform(w[0], uint32(i+1)))
		out[i], out[j] = out[j], out[i]
	}
}
