// aggregate_det.cu: the deterministic aggregation backward (Options.
// Deterministic). Instead of scattering with float atomics it gathers:
//   1. det_keys: each live edge e finds its destination i (binary search of
//      indptr) and gets the key Indices[e] when it belongs to a live
//      destination and a live source, else the sentinel srcCap; valid edges
//      are counted per source (integer atomics: the counts do not depend on
//      order). The host side scans the counts into srcPtr.
//   2. det_hist / det_scatter, once per digit: a least-significant-digit
//      radix sort of the edge ids by key, stable in every pass (a tile's
//      items are ranked in index order), so that the final order is the
//      edges grouped by source, in edge order within a source.
//   3. det_gather: one warp per source row j adds, in that order, the self
//      term selfW[j]·dout[j] (first) and edgeW[e]·dout[dst(e)] for its edges,
//      then adds the sum to dx[j]. Every sum has one fixed order, so the
//      result is bitwise the same for any run, grid or capacity.
// Every kernel reads its live counts from device memory and is launched for
// the capacity.
#include "common.cuh"
#include "vec.cuh"

#define DET_THREADS 256
#define DET_WARPS (DET_THREADS / 32)
#define DET_ITEMS 16
#define DET_TILE (DET_THREADS * DET_ITEMS)
#define DET_MAX_BITS 10
#define DET_BINS (1 << DET_MAX_BITS)
#define DET_NC 4

// det_keys: keys[e] and edgeDst[e] for live edges (see above); cnt[j] +=
// 1 for each valid edge of source j. cnt must be zero before.
extern "C" __global__ void det_keys(const int* indptr, const int* indices, const int* nDstP, int dstCap,
                                    const int* nEP, int edgeCap, const int* nSrcP, int srcCap, int* keys,
                                    int* edgeDst, int* cnt) {
    int nd = live_count(nDstP, dstCap), ne = live_count(nEP, edgeCap), ns = live_count(nSrcP, srcCap);
    for (i64 t = gtid(); t < ne; t += gthreads()) {
        int e = (int)t;
        // i = (number of rows r < nd with indptr[r] <= e) - 1
        int lo = 0, hi = nd;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (indptr[mid] <= e)
                lo = mid + 1;
            else
                hi = mid;
        }
        int i = lo - 1;
        bool ok = i >= 0 && e < min(indptr[i + 1], ne);
        int j = ok ? indices[e] : -1;
        ok = ok && j >= 0 && j < ns;
        keys[e] = ok ? j : srcCap;
        edgeDst[e] = ok ? i : -1;
        if (ok) atomicAdd(cnt + j, 1);
    }
}

// det_hist: hist[d * tiles + t] = number of the live items of tile t whose
// digit (key >> shift) & (2^bits - 1) is d. One block per tile at capacity.
extern "C" __global__ void __launch_bounds__(DET_THREADS)
det_hist(const int* keys, const int* nEP, int edgeCap, int shift, int bits, int tiles, int* hist) {
    __shared__ int h[DET_BINS];
    int ne = live_count(nEP, edgeCap), nb = 1 << bits, mask = nb - 1, t = blockIdx.x;
    for (int d = threadIdx.x; d < nb; d += DET_THREADS) h[d] = 0;
    __syncthreads();
    i64 base = (i64)t * DET_TILE;
    for (int k = 0; k < DET_ITEMS; k++) {
        i64 i = base + k * DET_THREADS + threadIdx.x;
        if (i < ne) atomicAdd(h + ((keys[i] >> shift) & mask), 1);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < nb; d += DET_THREADS) hist[(i64)d * tiles + t] = h[d];
}

// det_scatter moves the live items of tile t to their places after the
// pass: pos = scanned hist[d * tiles + t] + the number of items of digit d
// before it in the tile. Items are taken 256 at a time in index order; a
// warp ranks its items with __match_any_sync, and the counts of earlier
// warps come from shared memory, so ranks keep index order (a stable pass).
// valsIn null means the item's own index; keysOut may be null (last pass).
extern "C" __global__ void __launch_bounds__(DET_THREADS)
det_scatter(const int* keysIn, const int* valsIn, const int* nEP, int edgeCap, int shift, int bits, int tiles,
            const int* hist, int* keysOut, int* valsOut) {
    __shared__ int base[DET_BINS];
    __shared__ int wc[DET_WARPS][DET_BINS];
    int ne = live_count(nEP, edgeCap), nb = 1 << bits, mask = nb - 1, t = blockIdx.x;
    i64 tile0 = (i64)t * DET_TILE;
    if (tile0 >= ne) return;
    for (int d = threadIdx.x; d < nb; d += DET_THREADS) {
        base[d] = hist[(i64)d * tiles + t];
        for (int w = 0; w < DET_WARPS; w++) wc[w][d] = 0;
    }
    __syncthreads();
    int lane = lane_id(), warp = threadIdx.x >> 5;
    u32 below = (1u << lane) - 1u;
    for (int k = 0; k < DET_ITEMS; k++) {
        i64 r0 = tile0 + k * DET_THREADS;
        if (r0 >= ne) break;  // uniform over the block
        i64 i = r0 + threadIdx.x;
        bool live = i < ne;
        int key = live ? keysIn[i] : 0;
        int d = live ? (key >> shift) & mask : -1;
        u32 peers = __match_any_sync(FULL_MASK, d);
        int rank = __popc(peers & below), n = __popc(peers);
        bool leader = (peers & below) == 0u;
        if (live && leader) wc[warp][d] = n;
        __syncthreads();
        if (live) {
            int pos = base[d] + rank;
            for (int w = 0; w < warp; w++) pos += wc[w][d];
            if (keysOut) keysOut[pos] = key;
            valsOut[pos] = valsIn ? valsIn[i] : (int)i;
        }
        __syncthreads();
        if (live && leader) {
            atomicAdd(base + d, n);  // integer: order does not matter
            wc[warp][d] = 0;
        }
        __syncthreads();
    }
}

// det_gather: for rows j < live src:
//   dx[j, :] += (selfW[j]·dout[j, :] when j < live dst) + Σ_p edgeW[e]·dout[edgeDst[e], :]
// over p in [srcPtr[j], srcPtr[j+1]), e = perm[p], added in that order.
template <typename V>
__device__ __forceinline__ void det_gather(const int* srcPtr, const int* perm, const int* edgeDst,
                                           const float* edgeW, const float* selfW, int nd, int rows, int vecs,
                                           const V* dout, V* dx) {
    int lane = lane_id();
    for (int j = gwarp(); j < rows; j += gwarps()) {
        int p0 = srcPtr[j], p1 = srcPtr[j + 1];
        bool self = selfW && j < nd;
        float s = self ? selfW[j] : 0.f;
        for (int cb = 0; cb < vecs; cb += 32 * DET_NC) {
            V acc[DET_NC];
#pragma unroll
            for (int q = 0; q < DET_NC; q++) {
                int c = cb + q * 32 + lane;
                acc[q] = V();
                if (self && c < vecs) acc[q] = vscale(s, dout[(i64)j * vecs + c]);
            }
            for (int pb = p0; pb < p1; pb += 32) {
                int i = -1;
                float w = 0.f;
                if (pb + lane < p1) {
                    int e = perm[pb + lane];
                    i = edgeDst[e];
                    w = edgeW ? edgeW[e] : 1.0f;
                }
                int cnt = min(32, p1 - pb);
                for (int k = 0; k < cnt; k += 4) {
                    int ii[4];
                    float ww[4];
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        ii[u] = __shfl_sync(FULL_MASK, i, k + u);
                        ww[u] = __shfl_sync(FULL_MASK, w, k + u);
                        if (k + u >= cnt) ii[u] = -1;
                    }
#pragma unroll
                    for (int q = 0; q < DET_NC; q++) {
                        int c = cb + q * 32 + lane;
                        if (c >= vecs) continue;
                        V dv[4];
#pragma unroll
                        for (int u = 0; u < 4; u++) dv[u] = ii[u] >= 0 ? dout[(i64)ii[u] * vecs + c] : V();
#pragma unroll
                        for (int u = 0; u < 4; u++)
                            if (ii[u] >= 0) acc[q] = vfma(ww[u], dv[u], acc[q]);
                    }
                }
            }
#pragma unroll
            for (int q = 0; q < DET_NC; q++) {
                int c = cb + q * 32 + lane;
                if (c < vecs) dx[(i64)j * vecs + c] = vadd(dx[(i64)j * vecs + c], acc[q]);
            }
        }
    }
}

#define DET_ARGS                                                                                                  \
    const int *srcPtr, const int *perm, const int *edgeDst, const float *edgeW, const float *selfW,              \
        const int *nDstP, int dstCap, const int *nSrcP, int srcCap, int vecs

// det_rows is the rows det_gather adds to: the live sources (dx's rows;
// a block's destinations are its first sources, and a bipartite block's
// are not among them at all, so no row past them has anything to add).
__device__ __forceinline__ int det_rows(const int* nDstP, int dstCap, const int* nSrcP, int srcCap) {
    return live_count(nSrcP, srcCap);
}

extern "C" __global__ void det_gather4(DET_ARGS, const float4* dout, float4* dx) {
    det_gather<float4>(srcPtr, perm, edgeDst, edgeW, selfW, live_count(nDstP, dstCap),
                       det_rows(nDstP, dstCap, nSrcP, srcCap), vecs, dout, dx);
}
extern "C" __global__ void det_gather1(DET_ARGS, const float* dout, float* dx) {
    det_gather<float>(srcPtr, perm, edgeDst, edgeW, selfW, live_count(nDstP, dstCap),
                      det_rows(nDstP, dstCap, nSrcP, srcCap), vecs, dout, dx);
}
