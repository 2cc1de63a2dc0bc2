// rng.cuh: Philox4x32-10, the twin of package rng (bit-identical).
//
// One round with M0 = 0xD2511F53, M1 = 0xCD9E8D57:
//   (hi0, lo0) = M0 * c0; (hi1, lo1) = M1 * c2
//   c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
// Ten rounds; the key is bumped by (0x9E3779B9, 0xBB67AE85) between rounds.
// key = (uint32(seed), uint32(seed >> 32)); counter = (index, slot, step,
// epoch << 8 | stream). Word j of an index's sequence is word j % 4 of
// Philox(index, j / 4, ...).
#pragma once
#include "common.cuh"

__device__ __forceinline__ uint4 philox4x32_10(uint4 c, u32 k0, u32 k1) {
#pragma unroll
    for (int i = 0; i < 10; i++) {
        if (i > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        u32 hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
        u32 hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
        c = make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    }
    return c;
}

// philox_word returns word q (0..3) of w.
__device__ __forceinline__ u32 philox_word(uint4 w, int q) {
    return q == 0 ? w.x : (q == 1 ? w.y : (q == 2 ? w.z : w.w));
}

// uniform_below maps a word to [0, m): uint32((uint64(w) * uint64(m)) >> 32).
__device__ __forceinline__ u32 uniform_below(u32 w, u32 m) {
    return (u32)(((u64)w * (u64)m) >> 32);
}

// rand_hi is counter word 3 from a clock {epoch, step} and a stream.
__device__ __forceinline__ u32 rand_hi(const int* clock, u32 stream) {
    return ((u32)clock[0] << 8) | stream;
}
