// csr.cuh: a graph's neighbour lists as the sampling kernels read them
// (sample.cu, exclude.cu).
#pragma once
#include "common.cuh"

// Rows reads a graph's neighbour lists: a CSR (indptr, indices) or, when
// indptr is null, a pointer table (a PeerGraph's: the address of every
// vertex's list, in this GPU's memory or a peer's, and its degree). The
// branch is uniform across a launch.
struct Rows {
    const i64* __restrict__ indptr;
    const int* __restrict__ indices;
    const long long* __restrict__ addr;
    const int* __restrict__ deg;
    __device__ __forceinline__ int degree(int v) const {
        return indptr ? (int)(indptr[v + 1] - indptr[v]) : deg[v];
    }
    __device__ __forceinline__ const int* row(int v) const {
        return indptr ? indices + indptr[v] : (const int*)addr[v];
    }
};

__device__ __forceinline__ Rows make_rows(const i64* indptr, const int* indices, const long long* addr,
                                          const int* deg) {
    Rows g = {indptr, indices, addr, deg};
    return g;
}
