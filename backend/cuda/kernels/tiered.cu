// tiered.cu: the two-tier row gather of the hybrid mode (rows.cuh). Row i
// of out comes from the device cache when s = slot[ids[i]] >= 0, from the
// band's row -2 - s when s <= -2, and otherwise from the host tier; the
// band and the host tier are pinned host memory mapped into the device's
// address space and read over PCIe in place (zero-copy). The band holds
// the rows ranked after the cache's in rank order: the device reads rows
// that lie within a few hundred MiB at the link's bandwidth, rows spread
// over the whole table at a quarter of it (scripts/zero-copy.cu). Words are 16 bytes
// (tiered_rows4) or 4 bytes (tiered_rows1); bfloat16 tiers widen to
// float32 rows, four values a thread when the width allows (tiered_bf16x4)
// or one (tiered_bf16x1). With a null cache the rows of cached vertices
// are counted but not written: GatherTieredMisses, whose cached rows the
// bottom layer reads in place (aggregate.cu's aggregate_cat_tiered*);
// GatherTiered passes a null cache only when no vertex has a slot. Four
// words a thread, every load issued before the stores. The thread of each
// row's first word counts the row (and whether it came from host) in
// shared memory; each block then adds its counts to stats (u64 [2]: host
// rows, all rows; optional) once.
#include "rows.cuh"

// TieredRows: vertex id's row is cache row s = slot[id] when s >= 0
// (none without a cache), band row -2 - s when s <= -2, else host row id;
// kind 1 marks a row of host memory (band or host tier).
template <typename W>
struct TieredRows {
    const W* cache;
    const int* slot;
    const W* host;
    const W* band;
    u64 words;
    __device__ __forceinline__ const W* row(int id, int& k) const {
        int s = slot[id];
        k = s < 0;
        if (s >= 0) return cache ? cache + (u64)s * words : (const W*)0;
        if (s < -1) return band + (u64)(-2 - s) * words;
        return host + (u64)id * words;
    }
    __device__ __forceinline__ void count(unsigned int* my, int id, int k) const { my[0] += k, my[1]++; }
    __device__ __forceinline__ void took(u64 i, u64 c, int k, W v) const {}
};

template <typename W, typename O>
__device__ __forceinline__ void tiered(const W* cache, const int* slot, const W* host, const W* band, i64 hostRows,
                                       int words, const int* ids, const int* nP, int cap, O* out,
                                       unsigned long long* stats, int* err) {
    TieredRows<W> src = {cache, slot, host, band, (u64)words};
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    gather_rows_from<4, 2, u64, W, O>(src, hostRows, (u64)words, ids, total, out, stats, err);
}

extern "C" __global__ void tiered_rows4(const uint4* cache, const int* slot, const uint4* host, const uint4* band,
                                        i64 hostRows, int words, const int* ids, const int* nP, int cap, uint4* out,
                                        unsigned long long* stats, int* err) {
    tiered<uint4, uint4>(cache, slot, host, band, hostRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void tiered_rows1(const u32* cache, const int* slot, const u32* host, const u32* band,
                                        i64 hostRows, int words, const int* ids, const int* nP, int cap, u32* out,
                                        unsigned long long* stats, int* err) {
    tiered<u32, u32>(cache, slot, host, band, hostRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void tiered_bf16x4(const uint2* cache, const int* slot, const uint2* host, const uint2* band,
                                         i64 hostRows, int words, const int* ids, const int* nP, int cap, float4* out,
                                         unsigned long long* stats, int* err) {
    tiered<uint2, float4>(cache, slot, host, band, hostRows, words, ids, nP, cap, out, stats, err);
}

extern "C" __global__ void tiered_bf16x1(const unsigned short* cache, const int* slot, const unsigned short* host,
                                         const unsigned short* band, i64 hostRows, int words, const int* ids, const int* nP,
                                         int cap, float* out, unsigned long long* stats, int* err) {
    tiered<unsigned short, float>(cache, slot, host, band, hostRows, words, ids, nP, cap, out, stats, err);
}
