// block.cuh: a sampled block's live counts read on the device, and the
// clamped edge range of a destination (shared by the aggregation and
// weight kernels).
#pragma once
#include "common.cuh"

struct BlockCounts {
    int n, ne, ns;
};

__device__ __forceinline__ BlockCounts block_counts(const int* nDstP, int dstCap, const int* nEP, int edgeCap,
                                                    const int* nSrcP, int srcCap) {
    BlockCounts b;
    b.n = live_count(nDstP, dstCap);
    b.ne = live_count(nEP, edgeCap);
    b.ns = live_count(nSrcP, srcCap);
    return b;
}

__device__ __forceinline__ void edge_range(const int* indptr, int i, int ne, int* e0, int* e1) {
    int a = indptr[i], b = indptr[i + 1];
    a = a < 0 ? 0 : (a > ne ? ne : a);
    b = b < a ? a : (b > ne ? ne : b);
    *e0 = a;
    *e1 = b;
}

