// gin.cu: GIN's sum weights (gin_weights: edgeW = min(srcDeg[i], fanout)/s_i,
// srcDeg[i]/s_i with fanout < 0, selfW = 1 + eps, one warp per destination,
// as gcn_weights) and the sum of a row-wise product (dot_sum: one block;
// each thread adds a fixed stride of elements in float64, then a fixed
// tree, so every run gives the same bits).
#include "common.cuh"
#include "block.cuh"

extern "C" __global__ void gin_weights(const int* indptr, const float* srcDeg, int fanout, const float* eps, const int* nDstP,
                                       int dstCap, const int* nEP, int edgeCap, const int* nSrcP, int srcCap,
                                       float* edgeW, float* selfW) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id();
    float self = 1.0f + eps[0];
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        if (lane == 0) selfW[i] = self;
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        if (e1 == e0) continue;
        double d = (double)srcDeg[i];
        if (fanout >= 0 && d > (double)fanout) d = (double)fanout;
        float w = (float)(d / (double)(e1 - e0));
        for (int e = e0 + lane; e < e1; e += 32) edgeW[e] = w;
    }
}

#define DOT_THREADS 256
extern "C" __global__ void dot_sum(const float* a, const float* b, const int* nP, int cap, int dim, float* out) {
    __shared__ double part[DOT_THREADS];
    i64 total = (i64)live_count(nP, cap) * dim;
    double s = 0.0;
    for (i64 t = threadIdx.x; t < total; t += DOT_THREADS) s += (double)a[t] * (double)b[t];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = DOT_THREADS / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = (float)part[0];
}
