// act.cuh: the activation of bias + ReLU + dropout on a group of four
// columns, shared by bias_act_dropout (dense.cu) and norm_apply (norm.cu),
// and one element (or a 16-byte word) of its backward, shared by
// bias_act_dropout_bwd (dense.cu) and the gathered SAGE backward
// (transpose.cu).
#pragma once
#include "bf16.cuh"
#include "rng.cuh"

// act_store4 finishes group g of a row's four-column groups (v its values,
// m of them live, at element base of y and mask): ReLU when relu (NaN
// stays); with dropout, element k is kept iff word k of Philox(key, g,
// step, hi) is >= thr, kept values times scale and dropped ones 0, and mask
// records 1 where the gradient passes (kept and, with ReLU, positive). One
// 16-byte store when vec (base a multiple of 4, y and mask aligned); y is
// bfloat16 when ybf16.
__device__ __forceinline__ void act_store4(float* v, int m, i64 base, int g, int relu, int dropout, u32 thr,
                                           float scale, u32 key, u32 step, u32 hi, u32 k0, u32 k1,
                                           unsigned char* mask, float* y, int vec, int ybf16) {
    uint4 w = make_uint4(0u, 0u, 0u, 0u);
    if (dropout) w = philox4x32_10(make_uint4(key, (u32)g, step, hi), k0, k1);
    unsigned char keep[4] = {1, 1, 1, 1};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (relu && v[k] < 0.f) v[k] = 0.f;
        if (dropout) {
            bool kept = philox_word(w, k) >= thr;
            v[k] = kept ? v[k] * scale : 0.f;
            keep[k] = kept && (!relu || v[k] > 0.f);
        }
    }
    if (vec) {
        store_as((float4*)y, base >> 2, make_float4(v[0], v[1], v[2], v[3]), ybf16);
        if (dropout) *(uchar4*)(mask + base) = make_uchar4(keep[0], keep[1], keep[2], keep[3]);
        return;
    }
    for (int k = 0; k < m; k++) {
        store_as(y, base + k, v[k], ybf16);
        if (dropout) mask[base + k] = keep[k];
    }
}

// bwd_elem is one element of the backward: dy gated by the mask (which
// holds the ReLU's gate) or, without dropout, by the ReLU.
__device__ __forceinline__ float bwd_elem(float g, float yv, unsigned char m, int relu, int dropout, float scale) {
    if (dropout) g = m ? g * scale : 0.f;
    else if (relu && !(yv > 0.f)) g = 0.f;
    return g;
}

__device__ __forceinline__ float4 bwd_elem4(float4 g, float4 yv, uchar4 m, int relu, int dropout, float scale) {
    return make_float4(bwd_elem(g.x, yv.x, m.x, relu, dropout, scale), bwd_elem(g.y, yv.y, m.y, relu, dropout, scale),
                       bwd_elem(g.z, yv.z, m.z, relu, dropout, scale), bwd_elem(g.w, yv.w, m.w, relu, dropout, scale));
}

// act_bwd passes one value (or word) back; MaskOf is the mask's type for a
// value type.
__device__ __forceinline__ float act_bwd(float g, float yv, unsigned char m, int relu, int dropout, float scale) {
    return bwd_elem(g, yv, m, relu, dropout, scale);
}
__device__ __forceinline__ float4 act_bwd(float4 g, float4 yv, uchar4 m, int relu, int dropout, float scale) {
    return bwd_elem4(g, yv, m, relu, dropout, scale);
}
template <typename V>
struct MaskOf {
    typedef unsigned char T;
};
template <>
struct MaskOf<float4> {
    typedef uchar4 T;
};
