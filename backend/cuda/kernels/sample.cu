// sample.cu: neighbour sampling, the twin of package sample's CPU sampler.
//
// sample_count_scan computes each destination's sampled degree and scans
// them into offsets and the edge total in one launch (scan.cuh), and
// sample_fill* write the chosen neighbours (and copy the destinations into
// the block's source ids). Neighbour choice: with degree d and fanout k, all
// neighbours in CSR order when k < 0 or k >= d, none when k == 0, else
// Robert Floyd's algorithm: for j = 0..k-1, t = d-k+j, r = uniform(t+1) from
// draw j (word j%4 of Philox(v, j/4, step, epoch<<8|stream)); position t if r
// was already chosen, else r. Output in selection order. A destination v
// with skip[v] >= 0 (skip optional: a masked graph's view) gets none; the
// fill kernels write the rows the scan sized, so they skip it too.
//
// An exclusion (excl optional: a link step's, exclude.cuh) takes entries
// out of rows before sampling: a destination with e excluded entries
// samples by the rule above over d-e positions, position p standing for
// the p-th entry of its row that is not excluded (excl_position); the
// count finds e with one bucket look-up per destination, the fills again.
#include "common.cuh"
#include "csr.cuh"
#include "exclude.cuh"
#include "rng.cuh"
#include "scan.cuh"

// SampleCounts produces destination i's sampled degree: 0 past the live
// count and for ids outside the graph (which sample_fill reports).
struct SampleCounts {
    Rows g;
    i64 numNodes;
    const int* __restrict__ dst;
    int n, fanout;
    const int* __restrict__ skip;
    Excl ex;
    __device__ __forceinline__ int key(int i) const { return i < n ? dst[i] : -1; }
    __device__ __forceinline__ int value(int, int v) const {
        if (v < 0 || v >= numNodes) return 0;
        if (skip && skip[v] >= 0) return 0;
        int lo;
        int d = g.degree(v) - excl_find(ex, v, &lo);
        return (fanout < 0 || fanout >= d) ? d : fanout;
    }
};

// sample_count_scan: indptr[0, dstCap] = offsets of the sampled edges of
// every destination (rows past the live count are empty), *numEdges = the
// true total. One launch (scan.cuh).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
sample_count_scan(const i64* gIndptr, const int* rowDeg, i64 numNodes, const int* dst, const int* nDstP, int dstCap,
                  int fanout, const int* skip, const long long* excl, int exKeys, int exBuckets, int* indptr,
                  int* numEdges, u64* status, int* ctr) {
    Rows g = {gIndptr, 0, 0, rowDeg};
    SampleCounts p = {g, numNodes, dst, live_count(nDstP, dstCap), fanout, skip, make_excl(excl, exKeys, exBuckets)};
    ScanState st = {status, ctr};
    scan_tiles(p, dstCap + 1, indptr, numEdges, 0, 0, st);
}

// dst_prologue copies destination i into srcIDs and reports an id outside
// the graph; one lane per destination calls it.
__device__ __forceinline__ void dst_prologue(int i, int v, i64 numNodes, int* srcIDs, int srcCap, int* err) {
    if (i < srcCap) srcIDs[i] = v;
    if (v < 0 || v >= numNodes) report_error(err, ERR_SAMPLE_ID, i, v, 0);
}

// floyd_small: Floyd's algorithm for 0 < k <= 32, k < d, one lane per draw;
// returns in lane j (< k) the position chosen by draw j.
__device__ __forceinline__ u32 floyd_small(u32 v, u32 d, int k, u32 k0, u32 k1, u32 step, u32 hi) {
    int lane = lane_id();
    u32 t0 = d - (u32)k, r = 0;
    if (lane < k) {
        uint4 w = philox4x32_10(make_uint4(v, (u32)lane >> 2, step, hi), k0, k1);
        r = uniform_below(philox_word(w, lane & 3), t0 + (u32)lane + 1u);
    }
    u32 chosen = 0xffffffffu;
    for (int j = 0; j < k; j++) {
        u32 rj = __shfl_sync(FULL_MASK, r, j);
        bool dup = __any_sync(FULL_MASK, lane < j && chosen == rj);
        if (lane == j) chosen = dup ? t0 + (u32)j : rj;
    }
    return chosen;
}

// floyd_large: Floyd's algorithm for k > 32 with the chosen positions in
// shared memory ch[0, k); draws are computed 32 at a time, one per lane.
__device__ __forceinline__ void floyd_large(u32* ch, u32 v, u32 d, int k, u32 k0, u32 k1, u32 step, u32 hi) {
    int lane = lane_id();
    u32 t0 = d - (u32)k;
    for (int base = 0; base < k; base += 32) {
        int j = base + lane;
        u32 r = 0;
        if (j < k) {
            uint4 w = philox4x32_10(make_uint4(v, (u32)j >> 2, step, hi), k0, k1);
            r = uniform_below(philox_word(w, j & 3), t0 + (u32)j + 1u);
        }
        int cnt = min(32, k - base);
        for (int q = 0; q < cnt; q++) {
            int jj = base + q;
            u32 rj = __shfl_sync(FULL_MASK, r, q);
            bool dup = false;
            for (int s = lane; s < jj; s += 32) dup |= ch[s] == rj;
            dup = __any_sync(FULL_MASK, dup);
            if (lane == 0) ch[jj] = dup ? t0 + (u32)jj : rj;
            __syncwarp();
        }
    }
}

// sample_fill: one warp per live destination writes its sampled neighbours
// to nbrs[indptr[i] ...], dropping those at or past edgeCap. Fanouts above
// 32 need k * 4 bytes of dynamic shared memory per warp.
extern "C" __global__ void sample_fill(const i64* gIndptr, const int* gIndices, const long long* rowAddr,
                                       const int* rowDeg, i64 numNodes, const int* dst,
                                       const int* nDstP, int dstCap, int fanout, const long long* excl, int exKeys,
                                       int exBuckets, const int* indptr, int* nbrs, int edgeCap, u32 k0, u32 k1,
                                       const int* clock, u32 stream, int* srcIDs, int srcCap, int* err) {
    extern __shared__ u32 chosenMem[];
    Rows g = {gIndptr, gIndices, rowAddr, rowDeg};
    Excl ex = make_excl(excl, exKeys, exBuckets);
    int n = live_count(nDstP, dstCap);
    int lane = lane_id();
    u32 step = (u32)clock[1], hi = rand_hi(clock, stream);
    u32* ch = chosenMem + (threadIdx.x >> 5) * (fanout > 32 ? fanout : 0);
    for (int i = gwarp(); i < n; i += gwarps()) {
        int v = dst[i];
        int off = indptr[i];
        if (lane == 0) dst_prologue(i, v, numNodes, srcIDs, srcCap, err);
        if (v < 0 || v >= numNodes || off >= edgeCap || indptr[i + 1] == off) continue;
        int lo, e = excl_find(ex, v, &lo);
        int d = g.degree(v) - e;
        const int* row = g.row(v);
        int lim = edgeCap - off;
        int* out = nbrs + off;
        if (fanout < 0 || fanout >= d) {
            int m = min(d, lim);
            for (int j = lane; j < m; j += 32) out[j] = row[e ? excl_position(ex, lo, e, j) : j];
        } else if (fanout > 0 && fanout <= 32) {
            u32 c = floyd_small((u32)v, (u32)d, fanout, k0, k1, step, hi);
            if (lane < fanout && lane < lim) out[lane] = row[e ? excl_position(ex, lo, e, (int)c) : (int)c];
        } else if (fanout > 32) {
            floyd_large(ch, (u32)v, (u32)d, fanout, k0, k1, step, hi);
            int m = min(fanout, lim);
            for (int j = lane; j < m; j += 32) out[j] = row[e ? excl_position(ex, lo, e, (int)ch[j]) : (int)ch[j]];
            __syncwarp();
        }
    }
}

// sample_fill_groups: fanouts 1..G with G lanes per destination and 32/G
// destinations per warp (G = 8 or 16), so that small fanouts keep the
// lanes busy and several destinations' memory reads in flight. Every lane
// runs the same fanout-long Floyd loop (shuffles and ballots over the full
// warp, each group reading its own bits); rows that take all their
// neighbours (fanout >= degree) copy after the loop.
template <int G>
__device__ __forceinline__ void sample_fill_groups(Rows g, Excl ex, i64 numNodes,
                                                   const int* dst, int n, int k, const int* indptr, int* nbrs,
                                                   int edgeCap, u32 k0, u32 k1, u32 step, u32 hi, int* srcIDs,
                                                   int srcCap, int* err) {
    int lane = lane_id(), sub = lane & (G - 1), grp = lane / G;
    u32 gmask = ((1u << G) - 1u) << (grp * G);
    int per = 32 / G;
    for (int base = gwarp() * per; base < n; base += gwarps() * per) {
        int i = base + grp;
        int v = -1, off = 0, d = 0, lo = 0, e = 0;
        const int* row = 0;
        if (i < n) {
            v = dst[i];
            off = indptr[i];
            if (sub == 0) dst_prologue(i, v, numNodes, srcIDs, srcCap, err);
            if (v >= 0 && v < numNodes && off < edgeCap && indptr[i + 1] > off) {
                e = excl_find(ex, v, &lo);
                d = g.degree(v) - e;
                row = g.row(v);
            } else {
                v = -1;
            }
        }
        bool floyd = v >= 0 && k < d;
        u32 t0 = (u32)(d - k), r = 0;
        if (floyd && sub < k) {
            uint4 w = philox4x32_10(make_uint4((u32)v, (u32)sub >> 2, step, hi), k0, k1);
            r = uniform_below(philox_word(w, sub & 3), t0 + (u32)sub + 1u);
        }
        u32 chosen = 0xffffffffu;
        for (int j = 0; j < k; j++) {
            u32 rj = __shfl_sync(FULL_MASK, r, j, G);
            u32 dup = __ballot_sync(FULL_MASK, sub < j && chosen == rj) & gmask;
            if (sub == j) chosen = dup ? t0 + (u32)j : rj;
        }
        int lim = edgeCap - off;
        if (floyd) {
            if (sub < k && sub < lim) nbrs[off + sub] = row[e ? excl_position(ex, lo, e, (int)chosen) : (int)chosen];
        } else if (v >= 0) {
            int m = min(d, lim);
            for (int q = sub; q < m; q += G) nbrs[off + q] = row[e ? excl_position(ex, lo, e, q) : q];
        }
    }
}

#define FILL_GROUP_ARGS                                                                                          \
    const i64 *gIndptr, const int *gIndices, const long long *rowAddr, const int *rowDeg, i64 numNodes,        \
        const int *dst, const int *nDstP, int dstCap, int fanout, const long long *excl, int exKeys,              \
        int exBuckets, const int *indptr, int *nbrs, int edgeCap, u32 k0, u32 k1, const int *clock, u32 stream,  \
        int *srcIDs, int srcCap, int *err

extern "C" __global__ void sample_fill8(FILL_GROUP_ARGS) {
    sample_fill_groups<8>(make_rows(gIndptr, gIndices, rowAddr, rowDeg), make_excl(excl, exKeys, exBuckets), numNodes, dst, live_count(nDstP, dstCap), fanout, indptr, nbrs,
                          edgeCap, k0, k1, (u32)clock[1], rand_hi(clock, stream), srcIDs, srcCap, err);
}

extern "C" __global__ void sample_fill16(FILL_GROUP_ARGS) {
    sample_fill_groups<16>(make_rows(gIndptr, gIndices, rowAddr, rowDeg), make_excl(excl, exKeys, exBuckets), numNodes, dst, live_count(nDstP, dstCap), fanout, indptr, nbrs,
                           edgeCap, k0, k1, (u32)clock[1], rand_hi(clock, stream), srcIDs, srcCap, err);
}

// LIST_KINDS is backend.ListKinds: local, replica, remote, host.
#define LIST_KINDS 4

// count_reads adds, for every live destination of a PeerGraph that a mask
// does not skip, one read of its list to reads[kind[v]] (local, replica,
// remote, host); counts meet in shared memory, then one global add per
// block and kind.
extern "C" __global__ void count_reads(const int* dst, const int* nDstP, int dstCap, i64 numNodes,
                                       const unsigned char* kind, const int* skip, unsigned long long* reads) {
    __shared__ unsigned int cnt[LIST_KINDS];
    if (threadIdx.x < LIST_KINDS) cnt[threadIdx.x] = 0;
    __syncthreads();
    int n = live_count(nDstP, dstCap);
    for (i64 i = gtid(); i < n; i += gthreads()) {
        int v = dst[i];
        if (v < 0 || v >= numNodes || (skip && skip[v] >= 0)) continue;
        atomicAdd(&cnt[kind[v] < LIST_KINDS ? kind[v] : LIST_KINDS - 1], 1u);
    }
    __syncthreads();
    if (threadIdx.x < LIST_KINDS && cnt[threadIdx.x])
        atomicAdd(&reads[threadIdx.x], (unsigned long long)cnt[threadIdx.x]);
}
