// exclude.cuh: a link step's exclusion as the sampling kernels read it
// (backend.Link's BuildExclusion writes it: exclude.cu; the twin of
// package sample's Exclusion). keys [nkeys]: the excluded entries x<<32 |
// p (p: the position of the excluded neighbour in row x), sorted by
// (bucket of x, key), then -1; buckets [a power of two]: start<<32 |
// count of the keys whose vertex falls in the bucket.
#pragma once
#include "common.cuh"

struct Excl {
    const long long* __restrict__ keys;  // null: nothing is excluded
    const unsigned long long* __restrict__ buckets;
    int shift;  // 32 - log2(buckets)
};

// make_excl views an exclusion of nkeys keys and nbuckets buckets at excl
// (null: none).
__device__ __forceinline__ Excl make_excl(const long long* excl, int nkeys, int nbuckets) {
    Excl ex = {excl, (const unsigned long long*)(excl ? excl + nkeys : 0), 33 - __ffs(nbuckets)};
    return ex;
}

// excl_bucket is vertex x's bucket (Fibonacci hashing).
__device__ __forceinline__ int excl_bucket(int x, int shift) { return (int)(((u32)x * 0x9E3779B1u) >> shift); }

// excl_vertex is a key's vertex.
__device__ __forceinline__ int excl_vertex(long long k) { return (int)(k >> 32); }

// excl_find returns how many entries of x's row are excluded, e, and in
// *lo where their keys start: their positions (int)keys[lo + j], j < e,
// ascend.
__device__ __forceinline__ int excl_find(const Excl& ex, int x, int* lo) {
    *lo = 0;
    if (!ex.keys) return 0;
    u64 w = ex.buckets[excl_bucket(x, ex.shift)];
    int a = (int)(w >> 32), b = a + (int)(u32)w;
    if (a == b) return 0;
    while (a < b) {  // the first key of x
        int m = (a + b) >> 1;
        if (excl_vertex(ex.keys[m]) < x) a = m + 1; else b = m;
    }
    int first = a;
    b = (int)(w >> 32) + (int)(u32)w;
    while (a < b) {  // the first key after x's
        int m = (a + b) >> 1;
        if (excl_vertex(ex.keys[m]) <= x) a = m + 1; else b = m;
    }
    *lo = first;
    return a - first;
}

// excl_position is the row position of the p-th entry that is not
// excluded of a row whose e excluded positions start at keys[lo]: p plus
// the number of them q_j with q_j - j <= p (non-decreasing in j).
__device__ __forceinline__ int excl_position(const Excl& ex, int lo, int e, int p) {
    int a = 0, b = e;
    while (a < b) {
        int m = (a + b) >> 1;
        if ((int)ex.keys[lo + m] - m <= p) a = m + 1; else b = m;
    }
    return p + a;
}
