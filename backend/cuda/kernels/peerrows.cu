// peerrows.cu: the gather of feature rows spread over a group's devices
// (rows.cuh). Row i of out is the row of vertex ids[i], found through a
// per-vertex address table: in this device's memory or in a peer's, read
// in place (peer access over NVLink or PCIe). Words are 16 bytes
// (peer_rows4: the width is a multiple of four and every row starts on 16
// bytes) or 4 bytes (peer_rows1). Four words a thread, every load issued
// before the stores: a remote row is a read across the link, so the loads
// in flight set the rate. The thread of each row's first word counts the
// row under its kind (0 local, 1 replica, 2 remote) in shared memory; each
// block then adds its counts to stats (u64 [3], optional) once.
#include "rows.cuh"

// PeerRows: vertex id's row lies at addr[id]; its kind is kind[id], read
// by the thread that counts it.
template <typename W>
struct PeerRows {
    const i64* addr;
    const unsigned char* kind;
    __device__ __forceinline__ const W* row(int id, int& k) const { return (const W*)addr[id]; }
    __device__ __forceinline__ void count(unsigned int* my, int id, int k) const { count_kind<3>(my, kind[id]); }
    __device__ __forceinline__ void took(u64 i, u64 c, int k, W v) const {}
};

template <typename W>
__device__ __forceinline__ void peer_rows(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                          const int* ids, const int* nP, int cap, W* out, unsigned long long* stats,
                                          int* err) {
    PeerRows<W> src = {addr, kind};
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    gather_rows_from<4, 3, u64, W, W>(src, numRows, (u64)words, ids, total, out, stats, err);
}

extern "C" __global__ void peer_rows4(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                      const int* ids, const int* nP, int cap, uint4* out,
                                      unsigned long long* stats, int* err) {
    peer_rows<uint4>(addr, kind, numRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void peer_rows1(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                      const int* ids, const int* nP, int cap, u32* out,
                                      unsigned long long* stats, int* err) {
    peer_rows<u32>(addr, kind, numRows, words, ids, nP, cap, out, stats, err);
}

// Cross-batch reuse (KeepRows). peer_rows*_keep is the gather that also
// keeps the remote rows it reads among its first keepRows rows in the
// current half of keep, and takes a remote row the previous gather kept
// (tag[v] = gen - 1) from the other half instead of reading the peer; the
// bits are the same either way. One word a thread per pass. peer_rows_tag
// then records, for those rows, which gather kept them and where, and
// peer_rows_advance moves the counter on: three launches, so no thread
// reads a tag another writes. Counts: local, replica, remote read from the
// peer, remote reused (stats[3], when stats has 4 elements; else they
// count as remote).
template <typename W>
struct KeptRows {
    const i64* addr;
    const unsigned char* kind;
    const int* tag;
    const int* slot;
    int g, keepRows, nstats;
    u64 words;
    const W* prev; // the previous gather's half of keep
    W* cur;        // this gather's half
    __device__ __forceinline__ const W* row(int id, int& k) const {
        k = kind[id];
        const W* r = (const W*)addr[id];
        if (k == 2) {
            int s = slot[id];
            if (tag[id] == g - 1 && s >= 0 && s < keepRows) {
                r = prev + (u64)s * words;
                k = 3;
            }
        }
        return r;
    }
    __device__ __forceinline__ void count(unsigned int* my, int id, int k) const {
        count_kind<4>(my, k == 3 && nstats < 4 ? 2 : k);
    }
    __device__ __forceinline__ void took(u64 i, u64 c, int k, W v) const {
        if ((k == 2 || k == 3) && i < (u64)keepRows) cur[i * words + c] = v;
    }
};

template <typename W>
__device__ __forceinline__ void peer_rows_keep(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                               const int* ids, const int* nP, int cap, W* out,
                                               unsigned long long* stats, int nstats, W* keep, int keepRows,
                                               const int* tag, const int* slot, const int* genP, int* err) {
    int g = *genP;
    u64 half = (u64)keepRows * (u64)words;
    KeptRows<W> src = {addr, kind, tag, slot, g, keepRows, nstats, (u64)words, keep + (u64)((g - 1) & 1) * half,
                       keep + (u64)(g & 1) * half};
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    gather_rows_from<1, 4, u64, W, W>(src, numRows, (u64)words, ids, total, out, stats, err);
}

extern "C" __global__ void peer_rows4_keep(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                           const int* ids, const int* nP, int cap, uint4* out,
                                           unsigned long long* stats, int nstats, uint4* keep, int keepRows,
                                           const int* tag, const int* slot, const int* genP, int* err) {
    peer_rows_keep<uint4>(addr, kind, numRows, words, ids, nP, cap, out, stats, nstats, keep, keepRows, tag, slot,
                          genP, err);
}

extern "C" __global__ void peer_rows1_keep(const i64* addr, const unsigned char* kind, i64 numRows, int words,
                                           const int* ids, const int* nP, int cap, u32* out,
                                           unsigned long long* stats, int nstats, u32* keep, int keepRows,
                                           const int* tag, const int* slot, const int* genP, int* err) {
    peer_rows_keep<u32>(addr, kind, numRows, words, ids, nP, cap, out, stats, nstats, keep, keepRows, tag, slot,
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
