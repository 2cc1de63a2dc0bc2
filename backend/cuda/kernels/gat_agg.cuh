// gat_agg.cuh: what the grouped aggregation kernels (gat_agg.cu) and their
// flat form (gat_flat.cu) share: rounded float and float4 arithmetic, the
// positions a warp takes, and a destination's edge list loaded ahead.
#pragma once
#include "common.cuh"
#include "block.cuh"
#include "gat.cuh"

// HA_ARGS are the aggregation kernels' first parameters: the block and the shape.
#define HA_ARGS                                                                                                   \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,            \
        const int *nSrcP, int srcCap, int bip, int heads, int dim, int mean

// Rounded float and float4 arithmetic of the grouped kernels (explicit, so
// that no multiply is fused into a later add).
__device__ __forceinline__ float vmul_rn(float w, float x) { return __fmul_rn(w, x); }
__device__ __forceinline__ float4 vmul_rn(float w, float4 x) {
    return make_float4(__fmul_rn(w, x.x), __fmul_rn(w, x.y), __fmul_rn(w, x.z), __fmul_rn(w, x.w));
}
__device__ __forceinline__ float4 vmul_rn(float4 w, float4 x) {
    return make_float4(__fmul_rn(w.x, x.x), __fmul_rn(w.y, x.y), __fmul_rn(w.z, x.z), __fmul_rn(w.w, x.w));
}
__device__ __forceinline__ float vadd_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float4 vadd_rn(float4 a, float4 b) {
    return make_float4(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y), __fadd_rn(a.z, b.z), __fadd_rn(a.w, b.w));
}
__device__ __forceinline__ float vshfl(float v, int src) { return __shfl_sync(FULL_MASK, v, src); }
__device__ __forceinline__ float4 vshfl(float4 v, int src) {
    return make_float4(__shfl_sync(FULL_MASK, v.x, src), __shfl_sync(FULL_MASK, v.y, src),
                       __shfl_sync(FULL_MASK, v.z, src), __shfl_sync(FULL_MASK, v.w, src));
}
// HA_U positions per batch of loads: 4 when a row takes at most 8 floats
// of a lane, else 2.
#define HA_U(V, NQ) ((NQ) * (int)sizeof(V) <= 32 ? 4 : 2)

// PosSlice is the positions of a destination that one warp takes: k = c +
// p·m, m = 0, 1, ... (the backward: c = blockIdx.y of p = gridDim.y warps
// a destination; the forward takes them all, c = 0, p = 1).
struct PosSlice {
    int c, p;
    // count is the slice's positions among np.
    __device__ __forceinline__ int count(int np) const { return np > c ? (np - c + p - 1) / p : 0; }
    __device__ __forceinline__ int at(int m) const { return c + p * m; }
};

// HaDest is a destination of the grouped kernels: its first edge e0, its
// positions np and the sources of its slice's first 32 positions
// (att_sources, one a lane). A warp loads the indptr pair of its next
// destination (i + the grid's warps) as its current one's first rows go
// out, and the next one's sources (ha_dest) before it adds those rows up,
// so that each destination's rows go out without waiting for its edge
// list.
struct HaDest {
    int e0, np, jl;
};

// ha_dest is destination i (none past the live ones) from its indptr pair
// (p0, p1), clamped to the live edges as edge_range does.
__device__ __forceinline__ HaDest ha_dest(const int* indices, BlockCounts bc, int bip, int i, int p0, int p1,
                                          PosSlice ps) {
    HaDest d = {0, 1, -1};
    if (i >= bc.n) return d;
    int a = p0 < 0 ? 0 : (p0 > bc.ne ? bc.ne : p0);
    int b = p1 < a ? a : (p1 > bc.ne ? bc.ne : p1);
    d.e0 = a, d.np = 1 + b - a;
    d.jl = att_sources(indices, i, a, 0, d.np, bc.ns, bip, ps.c, ps.p);
    return d;
}

// ha_ptr loads the indptr pair of destination i into (p0, p1) (0 past the
// live ones).
__device__ __forceinline__ void ha_ptr(const int* indptr, BlockCounts bc, int i, int* p0, int* p1) {
    *p0 = i < bc.n ? indptr[i] : 0;
    *p1 = i < bc.n ? indptr[i + 1] : 0;
}

// ha_first is the first destination of the warp (gwarp()).
__device__ __forceinline__ HaDest ha_first(const int* indptr, const int* indices, BlockCounts bc, int bip,
                                           PosSlice ps) {
    int p0, p1;
    ha_ptr(indptr, bc, gwarp(), &p0, &p1);
    return ha_dest(indices, bc, bip, gwarp(), p0, p1, ps);
}
