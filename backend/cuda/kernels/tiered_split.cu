// tiered_split.cu: the device's half of a three-tier gather's placing
// (featstore.Disk). split_tiers reads each id's code in the slot table (a
// cache row, a host tier row as -2 - row, or -1 for a row elsewhere),
// writes the position's cache row, and lists the positions of host tier
// rows read in place and, apart, those whose rows the host must fetch
// into the staging: the host then touches only those, not every id of the
// gather, and each gather after it only its own. Each warp takes its
// entries of a list with one atomic add. listed_* copy the rows a list
// names (GatherListed: the rows read in place, or, once the host has
// answered its list, a staging row or a host tier row an entry), a
// thread a word of a listed row rather than of every position.
#include "rows.cuh"

__device__ __forceinline__ int clamp_rows(i64 rows) { return (int)(rows > INT32_MAX_ ? INT32_MAX_ : rows); }

// list_warp appends (i, x) to list for the lanes whose want is set: the
// warp's first such lane takes their entries with one atomic add on n.
// Entries past cap are cut (a count not zeroed by the caller).
__device__ __forceinline__ void list_warp(bool want, i64 i, int x, int* list, int* n, int cap) {
    unsigned mask = __ballot_sync(FULL_MASK, want);
    if (mask == 0) return;
    int lane = threadIdx.x & 31, leader = __ffs(mask) - 1, at = 0;
    if (lane == leader) at = atomicAdd(n, __popc(mask));
    at = __shfl_sync(FULL_MASK, at, leader);
    i64 j = (i64)at + __popc(mask & ((1u << lane) - 1u));
    if (want && j < cap) {
        list[2 * j] = (int)i;
        list[2 * j + 1] = x;
    }
}

// The loop runs whole blocks at a time, so every lane of a warp reaches
// the ballots together.
extern "C" __global__ void split_tiers(const int* slot, i64 slotLen, const int* ids, const int* nP, int cap, int stageFrom,
                                       int* cached, int* place, int* placeN, int* list, int* listN,
                                       unsigned long long* stats, int* err) {
    int n = live_count(nP, cap);
    if (stats && blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(stats, (unsigned long long)n);
    for (i64 base = (i64)blockIdx.x * blockDim.x; base < n; base += gthreads()) {
        i64 i = base + threadIdx.x;
        bool inPlace = false, fetch = false;
        int x = 0;
        if (i < n) {
            int v = ids[i], c = 0;
            if (v < 0 || v >= slotLen) {
                report_error(err, ERR_SPLIT_ID, (int)i, v, clamp_rows(slotLen));
            } else {
                c = slot[v];
            }
            if (cached) cached[i] = c > 0 ? c : 0;
            inPlace = c <= -2 && -2 - c < stageFrom;
            fetch = c == -1 || (c <= -2 && !inPlace);
            x = c == -1 ? v : c;
        }
        list_warp(inPlace, i, x, place, placeN, cap);
        list_warp(fetch, i, x, list, listN, cap);
    }
}

// listed: entry j < m of a list (the rows read in place, or an answered
// list) writes out's row list[2j]: staging row x = list[2j+1] when x >=
// 0, host tier row -2 - x when x <= -2, nothing when x = -1. The thread of a row's first word counts it
// (my[0] staging, my[1] host tier); each block adds its counts to stats
// once.
template <typename W, typename O>
__device__ __forceinline__ void listed(const W* host, i64 hostRows, const W* stage, i64 stageRows, int words,
                                       const int* list, const int* mP, int cap, O* out, i64 outRows,
                                       unsigned long long* stats, int* err) {
    __shared__ unsigned int counts[2];
    if (threadIdx.x < 2) counts[threadIdx.x] = 0;
    __syncthreads();
    unsigned int my[2] = {0, 0};
    u64 total = (u64)live_count(mP, cap) * (u64)words;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 j = t / (u64)words;
        int c = (int)(t - j * (u64)words);
        int i = list[2 * j], x = list[2 * j + 1];
        if (i < 0 || i >= outRows) {
            if (c == 0) report_error(err, ERR_LISTED_POS, (int)j, i, clamp_rows(outRows));
            continue;
        }
        const W* row = 0;
        int k = 0;
        if (x >= 0 && x < stageRows) {
            row = stage + (u64)x * words;
        } else if (x <= -2 && -2 - (i64)x < hostRows) {
            row = host + (u64)(-2 - (i64)x) * words, k = 1;
        } else if (x != -1) {
            if (c == 0) report_error(err, ERR_LISTED_ROW, (int)j, x, clamp_rows(stageRows));
            continue;
        }
        if (!row) continue;
        out[(u64)i * words + c] = WordOut<O, W>::of(row[c]);
        if (c == 0) count_kind<2>(my, k);
    }
    if (!stats) return;
    for (int q = 0; q < 2; q++)
        if (my[q]) atomicAdd(&counts[q], my[q]);
    __syncthreads();
    if (threadIdx.x < 2 && counts[threadIdx.x]) atomicAdd(&stats[threadIdx.x], (unsigned long long)counts[threadIdx.x]);
}

extern "C" __global__ void listed_rows4(const uint4* host, i64 hostRows, const uint4* stage, i64 stageRows, int words,
        const int* list, const int* mP, int cap, uint4* out, i64 outRows, unsigned long long* stats, int* err) {
    listed<uint4, uint4>(host, hostRows, stage, stageRows, words, list, mP, cap, out, outRows, stats, err);
}

extern "C" __global__ void listed_rows1(const u32* host, i64 hostRows, const u32* stage, i64 stageRows, int words,
        const int* list, const int* mP, int cap, u32* out, i64 outRows, unsigned long long* stats, int* err) {
    listed<u32, u32>(host, hostRows, stage, stageRows, words, list, mP, cap, out, outRows, stats, err);
}

extern "C" __global__ void listed_bf16x4(const uint2* host, i64 hostRows, const uint2* stage, i64 stageRows, int words,
        const int* list, const int* mP, int cap, float4* out, i64 outRows, unsigned long long* stats, int* err) {
    listed<uint2, float4>(host, hostRows, stage, stageRows, words, list, mP, cap, out, outRows, stats, err);
}

extern "C" __global__ void listed_bf16x1(const unsigned short* host, i64 hostRows, const unsigned short* stage, i64 stageRows, int words,
        const int* list, const int* mP, int cap, float* out, i64 outRows, unsigned long long* stats, int* err) {
    listed<unsigned short, float>(host, hostRows, stage, stageRows, words, list, mP, cap, out, outRows, stats, err);
}

// await_host hands a word of host memory between the device and a host
// goroutine watching it: one thread spins (acquire loads at system scope,
// a short sleep between them) until the word holds a value whose bit is
// in mask, then stores set (a release at system scope: the writes of the
// ops before, completed, reach the host first). Two minutes is an error.
#define AWAIT_HOST_TIMEOUT_NS 120000000000ull

__device__ __forceinline__ int load_acquire_sys_i32(const int* p) {
    int v;
    asm volatile("ld.acquire.sys.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release_sys_i32(int* p, int v) {
    asm volatile("st.release.sys.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

extern "C" __global__ void await_host(int* flag, int mask, int set, int* err) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    if (mask != 0) {
        u64 t0 = global_ns();
        for (;;) {
            int v = load_acquire_sys_i32(flag);
            if (v >= 0 && v < 32 && (((unsigned)mask >> v) & 1u)) break;
            if (global_ns() - t0 > AWAIT_HOST_TIMEOUT_NS) {
                report_error(err, ERR_AWAIT_HOST, v, mask, set);
                return;
            }
            __nanosleep(500);
        }
    }
    if (set >= 0) {
        __threadfence_system();
        store_release_sys_i32(flag, set);
    }
}
