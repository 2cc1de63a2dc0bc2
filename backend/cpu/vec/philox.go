package vec

import "math/bits"

// Philox4x32-10 constants (see package rng, which defines the generator).
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
)

// PhiloxWords fills out with the Philox4x32-10 words of consecutive slots:
// out[4s+w] is word w of Philox(counter = (index, slot0+s, c2, c3), key)
// for s < len(out)/4 (len(out) must be a multiple of 4). It equals
// rng.Key.Words for key = PhiloxKey(), c2 = Step, c3 = Epoch<<8|Stream, and
// computes eight slots at a time with AVX2 where available.
func PhiloxWords(key [2]uint32, index, slot0, c2, c3 uint32, out []uint32) {
	n := len(out) / 4
	done := philoxBlocks(key, index, slot0, c2, c3, out[:n/8*32])
	for s := done; s < n; s++ {
		w := philoxGo(index, slot0+uint32(s), c2, c3, key[0], key[1])
		copy(out[4*s:4*s+4], w[:])
	}
}

// philoxGo is one Philox4x32-10 block.
func philoxGo(c0, c1, c2, c3, k0, k1 uint32) [4]uint32 {
	for i := range 10 {
		if i > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		hi0, lo0 := bits.Mul32(philoxM0, c0)
		hi1, lo1 := bits.Mul32(philoxM1, c2)
		c0, c1, c2, c3 = hi1^c1^k0, lo1, hi0^c3^k1, lo0
	}
	return [4]uint32{c0, c1, c2, c3}
}
