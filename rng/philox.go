package rng

import "math/bits"

// Philox4x32-10 constants.
const (
	philoxM0 = 0xD2511F53 // multiplier applied to counter word 0
	philoxM1 = 0xCD9E8D57 // multiplier applied to counter word 2
	philoxW0 = 0x9E3779B9 // Weyl increment of key word 0
	philoxW1 = 0xBB67AE85 // Weyl increment of key word 1
)

// round applies one Philox4x32 round to the counter words.
func round(c0, c1, c2, c3, k0, k1 uint32) (uint32, uint32, uint32, uint32) {
	hi0, lo0 := bits.Mul32(philoxM0, c0)
	hi1, lo1 := bits.Mul32(philoxM1, c2)
	return hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
}

// Philox returns Philox4x32-10 of the counter under the key: ten rounds, the
// key bumped by the Weyl constants between rounds.
func Philox(ctr [4]uint32, key [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	c0, c1, c2, c3 = round(c0, c1, c2, c3, k0, k1)
	for i := 1; i < 10; i++ {
		k0 += philoxW0
		k1 += philoxW1
		c0, c1, c2, c3 = round(c0, c1, c2, c3, k0, k1)
	}
	return [4]uint32{c0, c1, c2, c3}
}

// Key names a stream of random numbers. See the package comment for how it
// maps to Philox's key and counter.
type Key struct {
	Seed   uint64 // Philox key: (uint32(Seed), uint32(Seed>>32))
	Epoch  uint32 // counter word 3, upper 24 bits
	Step   uint32 // counter word 2
	Stream uint32 // counter word 3, lower 8 bits; must be < 256
}

// PhiloxKey is the Philox key of k: (uint32(Seed), uint32(Seed>>32)).
func (k Key) PhiloxKey() [2]uint32 { return [2]uint32{uint32(k.Seed), uint32(k.Seed >> 32)} }

// Counter is the Philox counter (index, slot, Step, Epoch<<8|Stream).
func (k Key) Counter(index, slot uint32) [4]uint32 {
	return [4]uint32{index, slot, k.Step, k.Epoch<<8 | k.Stream}
}

// Words returns the four words of Philox(counter = (index, slot, Step,
// Epoch<<8|Stream), key = (uint32(Seed), uint32(Seed>>32))).
func (k Key) Words(index, slot uint32) [4]uint32 {
	return Philox(k.Counter(index, slot), k.PhiloxKey())
}

// Word returns the j-th number of the sequence of index: word j%4 of
// Words(index, j/4). Sampling draw j of vertex v is Word(v, j); the dropout
// and initialisation word of element (row, col) is Word(row, col).
func (k Key) Word(index, j uint32) uint32 {
	return k.Words(index, j/4)[j%4]
}

// Uniform maps a word to a uniform integer in [0, m):
// uint32((uint64(w)*uint64(m)) >> 32). m = 0 gives 0.
func Uniform(w, m uint32) uint32 {
	return uint32((uint64(w) * uint64(m)) >> 32)
}

// DropThreshold is the word threshold of dropout with probability p: an
// element is kept iff its word >= DropThreshold(p). It is
// uint32(min(float64(p)*2^32, 2^32-1)), and 0 when p <= 0 or p is NaN (keep
// everything). p >= 1 keeps only the word 0xFFFFFFFF.
func DropThreshold(p float32) uint32 {
	if !(p > 0) {
		return 0
	}
	return uint32(min(float64(p)*4294967296, 4294967295))
}
