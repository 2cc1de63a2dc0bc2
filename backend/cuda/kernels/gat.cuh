// gat.cuh: helpers the graph attention kernels share (gat.cu, gat_agg.cu):
// float64 warp sums and the positions of a destination (see
// backend.Attention's coefficient layout).
#pragma once
#include "common.cuh"

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// att_src is the source of position k of destination i (e0: its first
// edge), or -1 for an edge whose source is not live.
__device__ __forceinline__ int att_src(const int* indices, int i, int e0, int k, int ns) {
    if (k == 0) return i;
    int j = indices[e0 + k - 1];
    return (j >= 0 && j < ns) ? j : -1;
}

// att_row is the coefficient row of position k of destination i.
__device__ __forceinline__ i64 att_row(int i, int e0, int k, int dstCap) {
    return k == 0 ? (i64)i : (i64)dstCap + e0 + k - 1;
}
