// Package rng is fanout's counter-based random number generator: Philox4x32-10
// (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011). Every random decision in fanout (neighbour sampling, dropout,
// parameter initialisation) is a pure function of a key and a counter, so the
// result does not depend on thread count or scheduling, and a CUDA kernel
// that follows the conventions below reproduces the CPU result bit for bit.
//
// # Philox4x32-10
//
// State: counter c = (c0, c1, c2, c3) and key k = (k0, k1), all uint32.
// One round, with M0 = 0xD2511F53 and M1 = 0xCD9E8D57 and hi/lo the upper and
// lower 32 bits of the 64-bit product:
//
//	(hi0, lo0) = M0 * c0
//	(hi1, lo1) = M1 * c2
//	c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
//
// Ten rounds; between consecutive rounds (nine times, not after the last) the
// key is bumped by the Weyl constants: k0 += 0x9E3779B9, k1 += 0xBB67AE85
// (mod 2^32). The output is the final counter.
//
// # Keys and counters
//
// A Key names a stream of numbers: key = (uint32(Seed), uint32(Seed>>32)),
// counter = (index, slot, Step, Epoch<<8 | Stream). Stream must be below 256
// (it is not masked; Epoch<<8 wraps from epoch 2^24 on). Streams in use:
// sampling hop h (0-based, the hop that uses fanouts[h]) uses stream h
// (h < 64); dropout at model layer l uses stream 128+l; parameter
// initialisation uses streams from 200 on.
//
// Each call yields four words. The j-th number of an (index, ·) sequence is
// word j%4 of Philox(index, j/4, ...): see Key.Word.
//
// # Derived values
//
//   - Uniform integer in [0, m): Uniform(w, m) = uint32((uint64(w)*uint64(m)) >> 32)
//     (multiply-shift, no rejection; bias below m/2^32).
//   - Dropout: an element is kept iff w >= DropThreshold(p), with
//     DropThreshold(p) = uint32(min(float64(p)*2^32, 2^32-1)), 0 when p <= 0
//     (or NaN).
//   - Unit float in [0, 1): UnitFloat(w) = float32(w>>8) * 2^-24 (exact).
//   - Uniform float in [lo, hi): lo + (hi-lo)*u, each operation rounded to
//     float32 separately (no fused multiply-add; in CUDA use __fsub_rn,
//     __fmul_rn, __fadd_rn), so it is bit-exact across devices.
//   - Standard normal (Box-Muller), for element (row, col): with
//     w = Philox(row, col/4, ...) and q = col%4, the word pair
//     (a, b) = (w[q&2], w[q&2+1]); u1 = (float64(a>>8)+1) * 2^-24 in (0, 1],
//     u2 = float64(b>>8) * 2^-24; z = float32(sqrt(-2 ln u1) * cos(2π u2))
//     for even q, sin instead of cos for odd q, computed in float64. The
//     transcendental functions of different libraries may differ in the last
//     bit of float64, which very rarely changes the float32 result: normal
//     draws are reproducible on the CPU, and a GPU should receive
//     parameters initialised on the host rather than recompute them.
package rng
