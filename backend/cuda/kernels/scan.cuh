// scan.cuh: single-pass exclusive prefix sum of int32 items with decoupled
// look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back", 2016), for arrays whose length lives in device
// memory. One launch of SCAN_THREADS-thread blocks, one block per tile of
// SCAN_TILE items at capacity; blocks take tile numbers in the order they
// start (an atomic counter), publish their tile's sum, then add up their
// predecessors' published sums, 32 at a time. The block that finishes last
// clears the tile states and counters, so the scratch needs no reset launch.
//
// The items come from a producer, so that the scan can compute counts or
// flags on the fly instead of reading an array written by a separate launch.
// A producer has int key(i), which makes the independent loads (e.g. a
// vertex id), and int value(i, key), which makes the loads that depend on
// them; neither may write memory, so that the compiler can issue all of a
// thread's loads of one phase together.
#pragma once
#include "common.cuh"

#define SCAN_THREADS 256
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)

// Tile state: flag << 32 | value. 0: not yet; 1: tile sum; 2: inclusive sum.
#define ST_AGG 1ull
#define ST_INC 2ull

struct ScanState {
    u64* status;  // [tiles at capacity], zero between scans
    int* ctr;     // [2]: next tile number, finished blocks; zero between scans
};

__device__ __forceinline__ int warp_incl_scan(int v) {
    int lane = lane_id();
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        int u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += u;
    }
    return v;
}

// block_excl_scan: exclusive scan of one value per thread; *total gets the
// block's sum. ws is shared memory of 33 ints.
__device__ __forceinline__ int block_excl_scan(int v, int* ws, int* total) {
    int lane = lane_id(), warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    int incl = warp_incl_scan(v);
    if (lane == 31) ws[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int s = lane < nwarps ? ws[lane] : 0;
        int si = warp_incl_scan(s);
        if (lane < nwarps) ws[lane] = si - s;
        if (lane == 31) ws[32] = si;
    }
    __syncthreads();
    int r = incl - v + ws[warp];
    *total = ws[32];
    __syncthreads();
    return r;
}

__device__ __forceinline__ u64 ld_status(const u64* p) { return *(const volatile u64*)p; }

__device__ __forceinline__ void st_status(u64* p, u64 flag, int value) {
    __threadfence();
    *(volatile u64*)p = (flag << 32) | (u64)(u32)value;
}

// look_back returns the sum of all tiles before tile t (warp 0 calls it).
__device__ __forceinline__ int look_back(const u64* status, int t) {
    int lane = lane_id();
    int prefix = 0;
    int base = t - 1;
    while (base >= 0) {
        int idx = base - lane;
        u64 s = idx >= 0 ? ld_status(status + idx) : (ST_INC << 32);
        u32 flag = (u32)(s >> 32);
        int val = (int)(u32)s;
        u32 inc = __ballot_sync(FULL_MASK, flag == ST_INC);
        u32 wait = __ballot_sync(FULL_MASK, flag == 0);
        u32 upto = inc ? ((__ffs(inc) == 32) ? FULL_MASK : ((1u << __ffs(inc)) - 1u)) : FULL_MASK;
        if (wait & upto) continue;  // a predecessor has not published yet
        int part = (lane < 32 && ((upto >> lane) & 1u)) ? val : 0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) part += __shfl_xor_sync(FULL_MASK, part, d);
        prefix += part;
        if (inc) break;
        base -= 32;
    }
    return prefix;
}

// write_total stores sum plus an optional live count, clamped to int32.
__device__ __forceinline__ void write_total(int* total, i64 sum, const int* addP, int addCap) {
    if (total == 0) return;
    if (addP != 0) sum += live_count(addP, addCap);
    *total = sum > INT32_MAX_ ? INT32_MAX_ : (int)sum;
}

// scan_tiles runs the scan of items [0, len) of producer P into out (out[i]
// = sum of items before i), writing the total (plus *addP when addP is not
// null) to *total. Launch with gridDim.x = tiles at capacity.
template <typename P>
__device__ __forceinline__ void scan_tiles(P& prod, int len, int* out, int* total, const int* addP, int addCap,
                                           ScanState st) {
    __shared__ int tile[SCAN_TILE];
    __shared__ int ws[33];
    __shared__ int tnum, excl;
    if (threadIdx.x == 0) tnum = atomicAdd(st.ctr, 1);
    __syncthreads();
    int t = tnum;
    int tiles = (len + SCAN_TILE - 1) / SCAN_TILE;
    i64 base = (i64)t * SCAN_TILE;
    if (t < tiles) {
        int key[SCAN_ITEMS];
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; k++) {
            i64 i = base + k * SCAN_THREADS + threadIdx.x;
            key[k] = i < len ? prod.key((int)i) : 0;
        }
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; k++) {
            i64 i = base + k * SCAN_THREADS + threadIdx.x;
            tile[k * SCAN_THREADS + threadIdx.x] = i < len ? prod.value((int)i, key[k]) : 0;
        }
        __syncthreads();
        int v[SCAN_ITEMS], s = 0;
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; k++) {
            v[k] = s;
            s += tile[threadIdx.x * SCAN_ITEMS + k];
        }
        int agg;
        int off = block_excl_scan(s, ws, &agg);
        if (threadIdx.x == 0 && t > 0) st_status(st.status + t, ST_AGG, agg);
        if (threadIdx.x < 32) {
            int p = t > 0 ? look_back(st.status, t) : 0;
            if (threadIdx.x == 0) {
                excl = p;
                st_status(st.status + t, ST_INC, p + agg);
                if (t == tiles - 1) write_total(total, (i64)p + agg, addP, addCap);
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; k++) tile[threadIdx.x * SCAN_ITEMS + k] = v[k] + off + excl;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; k++) {
            i64 i = base + k * SCAN_THREADS + threadIdx.x;
            if (i < len) out[i] = tile[k * SCAN_THREADS + threadIdx.x];
        }
    } else if (t == 0 && threadIdx.x == 0) {
        write_total(total, 0, addP, addCap);  // empty input
    }
    // The last block to finish clears the states for the next scan.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        excl = atomicAdd(st.ctr + 1, 1) == (int)gridDim.x - 1;
    }
    __syncthreads();
    if (excl) {
        for (int i = threadIdx.x; i < (int)gridDim.x; i += blockDim.x) st.status[i] = 0;
        if (threadIdx.x == 0) st.ctr[0] = st.ctr[1] = 0;
    }
}
