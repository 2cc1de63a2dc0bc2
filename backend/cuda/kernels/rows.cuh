// rows.cuh: the one row gather of fanout's kernels (gather.cu, tiered.cu,
// peerrows.cu): out[i, :] = the row of vertex ids[i] for the live rows i,
// moved as words W (16, 4 or 2 bytes; or 8 or 2 bytes of bfloat16 widened
// to float32 as stored, where out is float32). A row source says where a vertex's row lies:
//
//   const W* row(int id, int& k)  the row's first word (null: the row is
//       counted but not written), and a kind k;
//   void count(unsigned* my, int id, int k)  counts the row (its first word's
//       thread) into my[0..K);
//   void took(u64 i, u64 c, int k, W v)  after word c of row i is stored.
//
// Each thread moves U words with every load issued before the stores: a
// row read over PCIe or from a peer is latency-bound, so the loads in
// flight set the rate. An id outside [0, numRows) is reported and its row
// left unwritten. With K > 0 the counts meet in shared memory, then each
// block adds its K counts to stats (u64, when not null) once.
#pragma once
#include "common.cuh"
#include "bf16.cuh"

// WordOut<O, W>::of is a stored word W as an out of words O holds it: the
// same word (O = W), or bfloat16 widened to float32 (float4 of uint2, float
// of unsigned short).
template <typename O, typename W>
struct WordOut {
    static __device__ __forceinline__ O of(W w) { return w; }
};
template <>
struct WordOut<float4, uint2> {
    static __device__ __forceinline__ float4 of(uint2 w) { return to_float(w); }
};
template <>
struct WordOut<float, unsigned short> {
    static __device__ __forceinline__ float of(unsigned short w) { return to_float(w); }
};

template <int U, int K, typename I, typename W, typename O, typename Src>
__device__ __forceinline__ void gather_rows_from(Src& src, i64 numRows, I words, const int* ids, I total, O* out,
                                                 unsigned long long* stats, int* err) {
    __shared__ unsigned int counts[K > 0 ? K : 1];
    if (K > 0) {
        if (threadIdx.x < K) counts[threadIdx.x] = 0;
        __syncthreads();
    }
    unsigned int my[K > 0 ? K : 1];
#pragma unroll
    for (int q = 0; q < K; q++) my[q] = 0;
    I stride = (I)gthreads();
    for (I t0 = (I)gtid(); t0 < total; t0 += U * stride) {
        W v[U];
        bool ok[U];
        I ri[U], rc[U];
        int rk[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            I t = t0 + (I)u * stride;
            ok[u] = false;
            if (t < total) {
                I i = t / words;
                I c = t - i * words;
                int id = ids[i];
                if (id >= 0 && id < numRows) {
                    int k = 0;
                    const W* row = src.row(id, k);
                    if (row) {
                        v[u] = row[c];
                        ok[u] = true;
                        ri[u] = i, rc[u] = c, rk[u] = k;
                    }
                    if (K > 0 && c == 0) src.count(my, id, k);
                } else if (c == 0) {
                    report_error(err, ERR_GATHER_ID, (int)i, id, (int)(numRows > INT32_MAX_ ? INT32_MAX_ : numRows));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (ok[u]) {
                out[t0 + (I)u * stride] = WordOut<O, W>::of(v[u]);
                src.took((u64)ri[u], (u64)rc[u], rk[u], v[u]);
            }
    }
    if (K > 0 && stats) {
#pragma unroll
        for (int q = 0; q < K; q++)
            if (my[q]) atomicAdd(&counts[q], my[q]);
        __syncthreads();
        if (threadIdx.x < K && counts[threadIdx.x])
            atomicAdd(&stats[threadIdx.x], (unsigned long long)counts[threadIdx.x]);
    }
}

// count_kind adds one to my[k] with a register array (no local memory).
template <int K>
__device__ __forceinline__ void count_kind(unsigned int* my, int k) {
#pragma unroll
    for (int q = 0; q < K; q++) my[q] += q == k;
}
