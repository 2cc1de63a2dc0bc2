// act.cuh: one element (or a 16-byte word) of the activation backward of
// bias + ReLU + dropout, shared by bias_act_dropout_bwd (dense.cu) and the
// gathered SAGE backward (transpose.cu).
#pragma once
#include "bf16.cuh"

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
