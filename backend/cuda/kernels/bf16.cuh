// bf16.cuh: every load and store of a float32 or bfloat16 value (uint16
// bit patterns) in fanout's kernels: the conversions, the vector a stored
// word widens to (Wide, to_float), the store of a float32 result as an
// output's element type (put), and, where the element type is a run-time
// flag (1: bfloat16), load_as and store_as.
#pragma once
#include "common.cuh"

// bf16_to_float widens exactly; float_to_bf16 rounds to nearest even (NaN
// stays a quiet NaN), as backend.BF16Bits. The x4 forms take four values
// packed in a uint2.
__device__ __forceinline__ float bf16_to_float(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
__device__ __forceinline__ float4 bf16x4_to_float4(uint2 w) {
    return make_float4(bf16_to_float(w.x & 0xffff), bf16_to_float(w.x >> 16), bf16_to_float(w.y & 0xffff),
                       bf16_to_float(w.y >> 16));
}
__device__ __forceinline__ unsigned short float_to_bf16(float v) {
    unsigned int b = __float_as_uint(v);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0u) return (unsigned short)((b >> 16) | 0x40u);
    return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ uint2 float4_to_bf16x4(float4 v) {
    return make_uint2((unsigned int)float_to_bf16(v.x) | ((unsigned int)float_to_bf16(v.y) << 16),
                      (unsigned int)float_to_bf16(v.z) | ((unsigned int)float_to_bf16(v.w) << 16));
}

// Wide<W>::type is the float32 vector a stored vector W widens to: float4
// for float4 and uint2 (four bfloat16), float for float and ushort.
template <typename W>
struct Wide {
    typedef float type;
};
template <>
struct Wide<float4> {
    typedef float4 type;
};
template <>
struct Wide<uint2> {
    typedef float4 type;
};

// to_float widens a stored vector (float32 as it is, bfloat16 exactly).
__device__ __forceinline__ float4 to_float(float4 w) { return w; }
__device__ __forceinline__ float to_float(float w) { return w; }
__device__ __forceinline__ float to_float(unsigned short w) { return bf16_to_float(w); }
__device__ __forceinline__ float4 to_float(uint2 w) { return bf16x4_to_float4(w); }

// put stores vector c of an output row: float32, or bfloat16 rounded
// (uint2: four, ushort: one).
__device__ __forceinline__ void put(float4* o, i64 c, float4 v) { o[c] = v; }
__device__ __forceinline__ void put(float* o, i64 c, float v) { o[c] = v; }
__device__ __forceinline__ void put(uint2* o, i64 c, float4 v) { o[c] = float4_to_bf16x4(v); }
__device__ __forceinline__ void put(unsigned short* o, i64 c, float v) { o[c] = float_to_bf16(v); }

// load_as loads element (or 16-byte word of four) i of p, whose values are
// bfloat16 when bf16 is set (p then points at their bits), widened;
// store_as stores v there likewise, rounded.
__device__ __forceinline__ float load_as(const float* p, i64 i, int bf16) {
    return bf16 ? to_float(((const unsigned short*)p)[i]) : p[i];
}
__device__ __forceinline__ float4 load_as(const float4* p, i64 i, int bf16) {
    return bf16 ? to_float(((const uint2*)p)[i]) : p[i];
}
__device__ __forceinline__ void store_as(float* p, i64 i, float v, int bf16) {
    if (bf16)
        put((unsigned short*)p, i, v);
    else
        p[i] = v;
}
__device__ __forceinline__ void store_as(float4* p, i64 i, float4 v, int bf16) {
    if (bf16)
        put((uint2*)p, i, v);
    else
        p[i] = v;
}
