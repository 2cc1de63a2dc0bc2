// exclude.cu: BuildExclusion, a link step's exclusion (exclude.cuh) built
// once per step from its positives, the twin of package sample's
// BuildExclusion. Two launches over the live positives' 2b (or b) pairs,
// a warp per pair:
//   exclude_keys  empties the keys (-1) and buckets (0), and writes each
//                 pair's key x<<32 | p (p: w's position in row x, a binary
//                 search) into canon, or -1 for a pair not in the graph or
//                 one that an earlier pair repeats;
//   exclude_sort  places each key at its rank among the keys ordered by
//                 (bucket, key), counted over all of them (no atomics: the
//                 same bits every run), and the first key of each bucket
//                 writes the bucket's start and count.
// Ranking by counting is quadratic in the pairs, spread over a warp each:
// 2,048 pairs (1,024 positives with their reverses) compare 4 M times.
#include "common.cuh"
#include "csr.cuh"
#include "exclude.cuh"

// pair_partner is the other end of pair t of b positives: pairs t < b are
// (ends[t], ends[b+t]), pairs b+i the reverses (ends[b+i], ends[i]).
__device__ __forceinline__ int pair_partner(const int* ends, int t, int b) { return ends[t < b ? t + b : t - b]; }

__device__ __forceinline__ int warp_sum_i(int v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL_MASK, v, d);
    return v;
}

// row_position is w's position in row x (sorted), or -1.
__device__ __forceinline__ int row_position(const Rows& g, int x, int w) {
    const int* row = g.row(x);
    int d = g.degree(x), a = 0, b = d;
    while (a < b) {
        int m = (a + b) >> 1;
        if (row[m] < w) a = m + 1; else b = m;
    }
    return a < d && row[a] == w ? a : -1;
}

extern "C" __global__ void exclude_keys(const i64* gIndptr, const int* gIndices, const long long* rowAddr,
                                        const int* rowDeg, i64 numNodes, const int* ends, const int* nP, int cap,
                                        int reverse, long long* excl, int nbuckets, long long* canon, int* err) {
    Rows g = make_rows(gIndptr, gIndices, rowAddr, rowDeg);
    int b = live_count(nP, cap), nk = reverse ? 2 * b : b, lane = lane_id();
    i64 keys = 2 * (i64)cap;
    for (i64 t = gtid(); t < keys + nbuckets; t += gthreads()) excl[t] = t < keys ? -1 : 0;
    for (int t = gwarp(); t < nk; t += gwarps()) {
        int x = ends[t], w = pair_partner(ends, t, b);
        bool xin = x >= 0 && x < numNodes, win = w >= 0 && w < numNodes;
        if (lane == 0 && !xin) report_error(err, ERR_EXCLUDE_ID, t, x, (int)numNodes);
        if (lane == 0 && xin && !win) report_error(err, ERR_EXCLUDE_ID, t < b ? t + b : t - b, w, (int)numNodes);
        bool dup = false;
        for (int s = lane; s < t && xin && win; s += 32) dup |= ends[s] == x && pair_partner(ends, s, b) == w;
        dup = __any_sync(FULL_MASK, dup);
        if (lane != 0) continue;
        int p = xin && win && !dup ? row_position(g, x, w) : -1;
        canon[t] = p < 0 ? -1 : ((long long)x << 32 | p);
    }
}

extern "C" __global__ void exclude_sort(const int* nP, int cap, int reverse, const long long* canon, long long* excl,
                                        int nbuckets) {
    int b = live_count(nP, cap), nk = reverse ? 2 * b : b, lane = lane_id();
    int shift = 33 - __ffs(nbuckets);
    unsigned long long* buckets = (unsigned long long*)(excl + 2 * (i64)cap);
    for (int t = gwarp(); t < nk; t += gwarps()) {
        long long c = canon[t];
        if (c < 0) continue;  // the whole warp: one pair
        int bc = excl_bucket(excl_vertex(c), shift);
        int less = 0, same = 0, sameLess = 0;
        for (int s = lane; s < nk; s += 32) {
            long long o = canon[s];
            if (o < 0) continue;
            int bo = excl_bucket(excl_vertex(o), shift);
            less += bo < bc || (bo == bc && o < c);
            same += bo == bc;
            sameLess += bo == bc && o < c;
        }
        less = warp_sum_i(less);
        same = warp_sum_i(same);
        sameLess = warp_sum_i(sameLess);
        if (lane != 0) continue;
        excl[less] = c;
        if (sameLess == 0) buckets[bc] = (unsigned long long)less << 32 | (u32)same;
    }
}
