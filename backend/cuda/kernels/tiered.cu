// tiered.cu: the two-tier row gather of the hybrid mode. Row i of out comes
// from the device cache when slot[ids[i]] >= 0 and otherwise from the host
// tier, pinned host memory mapped into the device's address space and read
// over PCIe in place (zero-copy). Words are 16 bytes (tiered_rows4) or 4
// bytes (tiered_rows1). Thread 0 of each row's first word counts the rows
// read from host and all rows into stats (u64 [2], optional).
#include "common.cuh"

template <typename W>
__device__ __forceinline__ void tiered_body(const W* cache, const int* slot, const W* host, i64 hostRows, int words,
                                            const int* ids, const int* nP, int cap, W* out,
                                            unsigned long long* stats, int* err) {
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 i = t / (u64)words;
        u64 c = t - i * (u64)words;
        int id = ids[i];
        if (id < 0 || id >= hostRows) {
            if (c == 0) report_error(err, ERR_GATHER_ID, (int)i, id, (int)(hostRows > INT32_MAX_ ? INT32_MAX_ : hostRows));
            continue;
        }
        int s = slot[id];
        const W* src = s >= 0 ? cache + (u64)s * words : host + (u64)id * words;
        out[t] = src[c];
        if (c == 0 && stats) {
            if (s < 0) atomicAdd(&stats[0], 1ull);
            atomicAdd(&stats[1], 1ull);
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
