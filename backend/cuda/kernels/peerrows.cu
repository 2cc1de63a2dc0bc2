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

// Cross-batch reuse (KeepRows). peer_rows*_keep is the gather that also
// keeps the remote rows it reads among its first keepRows rows in the
// current half of keep, and takes a remote row the previous gather kept
// (tag[v] = gen - 1) from the other half instead of reading the peer; the
// bits are the same either way. peer_rows_tag then records, for those
// rows, which gather kept them and where, and peer_rows_advance moves the
// counter on: three launches, so no thread reads a tag another writes.
// Counts: local, replica, remote read from the peer, remote reused
// (stats[3], when stats has 4 elements; else they count as remote).
template <typename W>
__device__ __forceinline__ void peer_rows_keep_body(const i64* addr, const unsigned char* kind, i64 numRows,
                                                    int words, const int* ids, const int* nP, int cap, W* out,
                                                    unsigned long long* stats, int nstats, W* keep, int keepRows,
                                                    const int* tag, const int* slot, const int* genP, int* err) {
    __shared__ unsigned int counts[4];
    if (threadIdx.x < 4) counts[threadIdx.x] = 0;
    __syncthreads();
    int g = *genP;
    u64 half = (u64)keepRows * (u64)words;
    const W* prev = keep + (u64)((g - 1) & 1) * half;
    W* cur = keep + (u64)(g & 1) * half;
    i64 n = live_count(nP, cap);
    u64 total = (u64)n * (u64)words;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 i = t / (u64)words;
        u64 c = t - i * (u64)words;
        int id = ids[i];
        if (id < 0 || id >= numRows) {
            if (c == 0) report_error(err, ERR_GATHER_ID, (int)i, id, (int)(numRows > INT32_MAX_ ? INT32_MAX_ : numRows));
            continue;
        }
        int k = kind[id];
        const W* row = (const W*)addr[id];
        if (k == 2) {
            int s = slot[id];
            if (tag[id] == g - 1 && s >= 0 && s < keepRows) {
                row = prev + (u64)s * (u64)words;
                k = 3;
            }
        }
        W v = row[c];
        out[t] = v;
        if ((k == 2 || k == 3) && i < (u64)keepRows) cur[i * (u64)words + c] = v;
        if (c == 0 && stats) atomicAdd(&counts[k == 3 && nstats < 4 ? 2 : k], 1u);
    }
    if (stats) {
        __syncthreads();
        if (threadIdx.x < 4 && counts[threadIdx.x])
            atomicAdd(&stats[threadIdx.x], (unsigned long long)counts[threadIdx.x]);
    }
}

extern "C" __global__ void peer_rows4_keep(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                           const int* ids, const int* nP, int cap, uint4* out,
                                           unsigned long long* stats, int nstats, uint4* keep, int keepRows,
                                           const int* tag, const int* slot, const int* genP, int* err) {
    peer_rows_keep_body<uint4>(addr, kind, numRows, words, ids, nP, cap, out, stats, nstats, keep, keepRows, tag, slot,
                               genP, err);
}

extern "C" __global__ void peer_rows1_keep(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                           const int* ids, const int* nP, int cap, u32* out,
                                           unsigned long long* stats, int nstats, u32* keep, int keepRows,
                                           const int* tag, const int* slot, const int* genP, int* err) {
    peer_rows_keep_body<u32>(addr, kind, numRows, words, ids, nP, cap, out, stats, nstats, keep, keepRows, tag, slot,
                             genP, err);
}

extern "C" __global__ void peer_rows_tag(const unsigned char* kind, i64 numRows, const int* ids, const int* nP,
                                         int cap, int keepRows, int* tag, int* slot, const int* genP) {
    int n = live_count(nP, cap);
    int g = *genP;
    for (i64 i = gtid(); i < n && i < keepRows; i += gthreads()) {
        int id = ids[i];
        if (id >= 0 && id < numRows && kind[id] == 2) tag[id] = g, slot[id] = (int)i;
    }
}

extern "C" __global__ void peer_rows_advance(int* genP) {
    if (gtid() == 0) *genP += 1;
}
