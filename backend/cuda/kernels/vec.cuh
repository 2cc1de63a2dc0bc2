// vec.cuh: float and float4 arithmetic used by the row kernels, so that one
// template serves 4-byte and 16-byte accesses.
#pragma once

__device__ __forceinline__ float vscale(float w, float x) { return w * x; }
__device__ __forceinline__ float4 vscale(float w, float4 x) { return make_float4(w * x.x, w * x.y, w * x.z, w * x.w); }

// vfma: a + w * x
__device__ __forceinline__ float vfma(float w, float x, float a) { return fmaf(w, x, a); }
__device__ __forceinline__ float4 vfma(float w, float4 x, float4 a) {
    return make_float4(fmaf(w, x.x, a.x), fmaf(w, x.y, a.y), fmaf(w, x.z, a.z), fmaf(w, x.w, a.w));
}
// (a weight a component)
__device__ __forceinline__ float4 vfma(float4 w, float4 x, float4 a) {
    return make_float4(fmaf(w.x, x.x, a.x), fmaf(w.y, x.y, a.y), fmaf(w.z, x.z, a.z), fmaf(w.w, x.w, a.w));
}

// vcomp is component k (0-3, a constant once unrolled) of v (a float's
// only one, k = 0); vset sets it to f.
__device__ __forceinline__ float vcomp(float v, int) { return v; }
__device__ __forceinline__ float vcomp(float4 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w; }
__device__ __forceinline__ void vset(float& v, int, float f) { v = f; }
__device__ __forceinline__ void vset(float4& v, int k, float f) {
    if (k == 0) v.x = f;
    else if (k == 1) v.y = f;
    else if (k == 2) v.z = f;
    else v.w = f;
}

// vadd: a + b
__device__ __forceinline__ float vadd(float a, float b) { return a + b; }
__device__ __forceinline__ float4 vadd(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }

// vatomic_add: *p += w * x, component-wise float atomics (vatomic_add4: a
// weight a component).
__device__ __forceinline__ void vatomic_add(float* p, float w, float x) { atomicAdd(p, w * x); }
// On sm_90 with PTX ISA 8.1 (CUDA 12.1) or newer, one 16-byte vector
// reduction replaces four scalar ones (the L2 counts transactions, not
// bytes); older compilers and devices use scalar atomics.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 1))
#define FANOUT_VECTOR_RED 1
#endif

__device__ __forceinline__ void vatomic_add4(float4* p, float4 w, float4 x) {
#ifdef FANOUT_VECTOR_RED
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(w.x * x.x), "f"(w.y * x.y),
                 "f"(w.z * x.z), "f"(w.w * x.w)
                 : "memory");
#else
    float* q = (float*)p;
    atomicAdd(q, w.x * x.x);
    atomicAdd(q + 1, w.y * x.y);
    atomicAdd(q + 2, w.z * x.z);
    atomicAdd(q + 3, w.w * x.w);
#endif
}
__device__ __forceinline__ void vatomic_add(float4* p, float w, float4 x) {
    vatomic_add4(p, make_float4(w, w, w, w), x);
}
