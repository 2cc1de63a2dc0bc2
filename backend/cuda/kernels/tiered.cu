// tiered.cu: the two-tier row gather of the hybrid mode. Row i of out comes
// from the device cache when slot[ids[i]] >= 0 and otherwise from the host
// tier, pinned host memory mapped into the device's address space and read
// over PCIe in place (zero-copy). Words are 16 bytes (tiered_rows4) or 4
// bytes (tiered_rows1). The thread of each row's first word counts the row
// (and whether it came from host) in shared memory; each block then adds its
// counts to stats (u64 [2], optional) once.
#include "common.cuh"

template <typename W>
__device__ __forceinline__ void tiered_body(const W* cache, const int* slot, const W* host, i64 hostRows, int words,
                                            const int* ids, const int* nP, int cap, W* out,
                                            unsigned long long* stats, int* err) {
    __shared__ unsigned int hostCount, rowCount;
    if (threadIdx.x == 0) hostCount = 0, rowCount = 0;
    __syncthreads();
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    u64 stride = gthreads();
    unsigned int myHost = 0, myRows = 0;
    // Four words a thread, every load issued before the stores (as gather.cu).
    for (u64 t0 = gtid(); t0 < total; t0 += 4 * stride) {
        W v[4];
        bool ok[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            u64 t = t0 + (u64)u * stride;
            ok[u] = false;
            if (t < total) {
                u64 i = t / (u64)words;
                u64 c = t - i * (u64)words;
                int id = ids[i];
                if (id >= 0 && id < hostRows) {
                    int s = slot[id];
                    v[u] = s >= 0 ? cache[(u64)s * words + c] : host[(u64)id * words + c];
                    ok[u] = true;
                    if (c == 0) myRows++, myHost += s < 0;
                } else if (c == 0) {
                    report_error(err, ERR_GATHER_ID, (int)i, id, (int)(hostRows > INT32_MAX_ ? INT32_MAX_ : hostRows));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (ok[u]) out[t0 + (u64)u * stride] = v[u];
    }
    // Counts meet in shared memory, then one global add per block.
    if (stats) {
        if (myRows) atomicAdd(&rowCount, myRows);
        if (myHost) atomicAdd(&hostCount, myHost);
        __syncthreads();
        if (threadIdx.x == 0) {
            if (hostCount) atomicAdd(&stats[0], (unsigned long long)hostCount);
            if (rowCount) atomicAdd(&stats[1], (unsigned long long)rowCount);
        }
    }
}

extern "C" __global__ void tiered_rows4(const uint4* cache, const int* slot, const uint4* host, i64 hostRows, int words,
                                        const int* ids, const int* nP, int cap, uint4* out,
                                        unsigned long long* stats, int* err) {
    tiered_body<uint4>(cache, slot, host, hostRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void tiered_rows1(const u32* cache, const int* slot, const u32* host, i64 hostRows, int words,
                                        const int* ids, const int* nP, int cap, u32* out,
                                        unsigned long long* stats, int* err) {
    tiered_body<u32>(cache, slot, host, hostRows, words, ids, nP, cap, out, stats, err);
}

// bfloat16 tiers widen to float32 rows: four values a thread when the width
// allows (tiered_bf16x4), else one (tiered_bf16x1); the counts as above.
__device__ __forceinline__ float4 widen(uint2 w) { return bf16x4_to_float4(w); }
__device__ __forceinline__ float widen(unsigned short w) { return bf16_to_float(w); }

template <typename W, typename O>
__device__ __forceinline__ void tiered_bf16_body(const W* cache, const int* slot, const W* host, i64 hostRows,
                                                 int words, const int* ids, const int* nP, int cap, O* out,
                                                 unsigned long long* stats, int* err) {
    __shared__ unsigned int hostCount, rowCount;
    if (threadIdx.x == 0) hostCount = 0, rowCount = 0;
    __syncthreads();
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    u64 stride = gthreads();
    unsigned int myHost = 0, myRows = 0;
    // Four words a thread with every load issued before the stores: reads
    // over PCIe are latency-bound, so the loads in flight set the rate.
    for (u64 t0 = gtid(); t0 < total; t0 += 4 * stride) {
        W v[4];
        bool ok[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            u64 t = t0 + (u64)u * stride;
            ok[u] = false;
            if (t < total) {
                u64 i = t / (u64)words, c = t - i * (u64)words;
                int id = ids[i];
                if (id >= 0 && id < hostRows) {
                    int s = slot[id];
                    v[u] = s >= 0 ? cache[(u64)s * words + c] : host[(u64)id * words + c];
                    ok[u] = true;
                    if (c == 0) myRows++, myHost += s < 0;
                } else if (c == 0) {
                    report_error(err, ERR_GATHER_ID, (int)i, id, (int)(hostRows > INT32_MAX_ ? INT32_MAX_ : hostRows));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (ok[u]) out[t0 + (u64)u * stride] = widen(v[u]);
    }
    if (stats) {
        if (myRows) atomicAdd(&rowCount, myRows);
        if (myHost) atomicAdd(&hostCount, myHost);
        __syncthreads();
        if (threadIdx.x == 0) {
            if (hostCount) atomicAdd(&stats[0], (unsigned long long)hostCount);
            if (rowCount) atomicAdd(&stats[1], (unsigned long long)rowCount);
        }
    }
}

extern "C" __global__ void tiered_bf16x4(const uint2* cache, const int* slot, const uint2* host, i64 hostRows, int words,
                                         const int* ids, const int* nP, int cap, float4* out,
                                         unsigned long long* stats, int* err) {
    tiered_bf16_body<uint2, float4>(cache, slot, host, hostRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void tiered_bf16x1(const unsigned short* cache, const int* slot, const unsigned short* host,
                                         i64 hostRows, int words, const int* ids, const int* nP, int cap, float* out,
                                         unsigned long long* stats, int* err) {
    tiered_bf16_body<unsigned short, float>(cache, slot, host, hostRows, words, ids, nP, cap, out, stats, err);
}
