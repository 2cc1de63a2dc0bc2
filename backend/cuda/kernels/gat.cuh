// gat.cuh: helpers the graph attention kernels share (gat.cu,
// gat_softmax.cu, gat_agg.cu, gat_first.cu): float64 warp sums, the
// positions of a destination (see backend.Attention's coefficient layout),
// and the lane groups per head of the grouped kernels (HeadLanes).
#pragma once
#include "common.cuh"

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// att_src is the source of position k of destination i (e0: its first
// edge), or -1 for an edge whose source is not live and for the self loop
// of a bipartite block (bip), which has none.
__device__ __forceinline__ int att_src(const int* indices, int i, int e0, int k, int ns, int bip) {
    if (k == 0) return bip ? -1 : i;
    int j = indices[e0 + k - 1];
    return (j >= 0 && j < ns) ? j : -1;
}

// att_sources loads the sources of positions pb + lane of destination i (-1
// past the np positions or for a source that is not live); of a slice of
// its positions (pc, pp: positions pc + pp·m), of the slice's positions m
// = pb + lane.
__device__ __forceinline__ int att_sources(const int* indices, int i, int e0, int pb, int np, int ns, int bip,
                                           int pc = 0, int pp = 1) {
    int k = pc + pp * (pb + lane_id());
    return k < np ? att_src(indices, i, e0, k, ns, bip) : -1;
}

// att_row is the coefficient row of position k of destination i.
__device__ __forceinline__ i64 att_row(int i, int e0, int k, int dstCap) {
    return k == 0 ? (i64)i : (i64)dstCap + e0 + k - 1;
}

// vdot_d: s + Σ d·x over the components, in float64, in component order.
__device__ __forceinline__ double vdot_d(float d, float x, double s) { return s + (double)d * (double)x; }
__device__ __forceinline__ double vdot_d(float4 d, float4 x, double s) {
    s += (double)d.x * (double)x.x;
    s += (double)d.y * (double)x.y;
    s += (double)d.z * (double)x.z;
    return s + (double)d.w * (double)x.w;
}

// HeadLanes is a lane's place in the grouped kernels: head h (idle when h
// >= heads), lane s of its group of 2^gl, and the head's width in words.
// The head's words are dealt to its lanes in turn: word k of the lane is
// column s + k·2^gl; with column slices (a row's columns split among
// `slices` warps, a power of two, this one slice `slice`), to the
// 2^gl·slices lanes of those warps: column s + slice·2^gl +
// k·2^gl·slices.
struct HeadLanes {
    int h, s, gl, dimV, wV;
    int c0, cl;  // the lane's first column; log2 of the step between its columns
    bool on;
    // word k's column within the head, or -1 when the lane has none
    __device__ __forceinline__ int col(int k) const {
        int c = c0 + (k << cl);
        return on && c < dimV ? c : -1;
    }
};

// head_lanes is the lane's place; slices (a power of two) warps share a
// row's columns, this one being slice slice.
__device__ __forceinline__ HeadLanes head_lanes(int heads, int dimV, int gl, int slice = 0, int slices = 1) {
    HeadLanes L;
    int lane = lane_id();
    L.h = lane >> gl, L.s = lane & ((1 << gl) - 1), L.gl = gl, L.dimV = dimV, L.wV = heads * dimV;
    L.c0 = L.s + (slice << gl), L.cl = gl + 31 - __clz(slices);
    L.on = L.h < heads;
    return L;
}
