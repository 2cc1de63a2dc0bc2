// peerrows.cu: the gather of feature rows spread over a group's devices.
// Row i of out is the row of vertex ids[i], found through a per-vertex
// address table: in this device's memory or in a peer's, read in place
// (peer access over NVLink or PCIe). Words are 16 bytes (peer_rows4: the
// width is a multiple of four and every row starts on 16 bytes) or 4 bytes
// (peer_rows1). The thread of each row's first word counts the row under
// its kind (0 local, 1 replica, 2 remote) in shared memory; each block then
// adds its counts to stats (u64 [3], optional) once.
#include "common.cuh"

template <typename W>
__device__ __forceinline__ void peer_rows_body(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                               const int* ids, const int* nP, int cap, W* out,
                                               unsigned long long* stats, int* err) {
    __shared__ unsigned int counts[3];
    if (threadIdx.x < 3) counts[threadIdx.x] = 0;
    __syncthreads();
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    u64 stride = gthreads();
    unsigned int myLocal = 0, myReplica = 0, myRemote = 0;
    // Four words a thread, every load issued before the stores: a remote
    // row is a read across the link, so the loads in flight set the rate.
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
                if (id >= 0 && id < numRows) {
                    const W* row = (const W*)addr[id];
                    v[u] = row[c];
                    ok[u] = true;
                    if (c == 0) {
                        unsigned char k = kind[id];
                        myLocal += k == 0;
                        myReplica += k == 1;
                        myRemote += k == 2;
                    }
                } else if (c == 0) {
                    report_error(err, ERR_GATHER_ID, (int)i, id, (int)(numRows > INT32_MAX_ ? INT32_MAX_ : numRows));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (ok[u]) out[t0 + (u64)u * stride] = v[u];
    }
    // Counts meet in shared memory, then one global add per kind per block.
    if (stats) {
        if (myLocal) atomicAdd(&counts[0], myLocal);
        if (myReplica) atomicAdd(&counts[1], myReplica);
        if (myRemote) atomicAdd(&counts[2], myRemote);
        __syncthreads();
        if (threadIdx.x < 3 && counts[threadIdx.x])
            atomicAdd(&stats[threadIdx.x], (unsigned long long)counts[threadIdx.x]);
    }
}

extern "C" __global__ void peer_rows4(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                      const int* ids, const int* nP, int cap, uint4* out,
                                      unsigned long long* stats, int* err) {
    peer_rows_body<uint4>(addr, kind, numRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void peer_rows1(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                      const int* ids, const int* nP, int cap, u32* out,
                                      unsigned long long* stats, int* err) {
    peer_rows_body<u32>(addr, kind, numRows, words, ids, nP, cap, out, stats, err);
}
