// rng.cu: a kernel that exposes Philox to tests, so that they can compare
// the device generator with package rng word for word.
#include "common.cuh"
#include "rng.cuh"

// philox_words: out[i] = Philox(ctr[i], (k0, k1)) for i < n.
extern "C" __global__ void philox_words(const uint4* ctr, int n, u32 k0, u32 k1, uint4* out) {
    for (i64 i = gtid(); i < n; i += gthreads()) out[i] = philox4x32_10(ctr[i], k0, k1);
}
