// common.cuh: types and helpers shared by every fanout kernel. Plain CUDA C++
// that NVRTC 11.2 through 13 accepts; no toolkit headers (NVRTC has none).
#pragma once

typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu
#define INT32_MAX_ 0x7fffffff

// The error codes written into the device error record (ERR_*, generated
// from the op descriptions with the Go side's messages).
#include "errors.cuh"

// flag_set reports whether an optional I32 flag (null: none) is non-zero.
__device__ __forceinline__ bool flag_set(const int* flag) { return flag != 0 && *flag != 0; }

// live_count reads a live count from device memory and clamps it to
// [0, cap]. A null pointer means "cap".
__device__ __forceinline__ int live_count(const int* p, int cap) {
    if (p == 0) return cap;
    int v = *p;
    return v < 0 ? 0 : (v > cap ? cap : v);
}

// report_error records the first error of a run: err is int[4] = {code, a,
// b, c}. Later errors are dropped.
__device__ __forceinline__ void report_error(int* err, int code, int a, int b, int c) {
    if (atomicCAS(err, 0, code) == 0) {
        err[1] = a;
        err[2] = b;
        err[3] = c;
    }
}

// Grid-stride helpers: global thread index and thread count as 64-bit.
__device__ __forceinline__ i64 gtid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 gthreads() { return (i64)gridDim.x * blockDim.x; }

// Warp index among all warps of the grid (1-D blocks, multiple of 32).
__device__ __forceinline__ int gwarp() { return (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5); }
__device__ __forceinline__ int gwarps() { return (int)((gridDim.x * blockDim.x) >> 5); }
__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }

// global_ns is the device's global timer in nanoseconds (the waits on
// another agent's word time out by it).
__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
