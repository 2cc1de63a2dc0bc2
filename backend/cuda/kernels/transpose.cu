// transpose.cu: a block's live edges grouped by source (TransposeBlock),
// and GraphSAGE's concatenation gradient gathered by source and passed back
// through the activation below (AggregateConcatBackward).
//
// TransposeBlock, by default (the order within a source is arbitrary):
//   csc_edges, counting: edgeDst[e] = i and cnt[j] += 1 for each edge e of
//     a live destination i whose source j is live (cnt zeroed before);
//   a scan of cnt into srcPtr (the host side launches scan_array);
//   csc_edges, filling: perm[srcPtr[j] + (cnt[j] - 1)] = e, decrementing
//     cnt[j], so cnt is zero again afterwards.
// With Options.Deterministic the host side sorts instead (aggregate_det.cu)
// and copies the result.
#include "common.cuh"
#include "block.cuh"
#include "vec.cuh"
#include "act.cuh"

// csc_edges visits each edge e of a live destination i whose source j is
// live: the count pass (fill = 0) sets edgeDst[e] = i and adds 1 to cnt[j];
// the fill pass places e at srcPtr[j] + (cnt[j] - 1), decrementing cnt[j].
extern "C" __global__ void csc_edges(const int* indptr, const int* indices, const int* nDstP, int dstCap,
                                     const int* nEP, int edgeCap, const int* nSrcP, int srcCap, int fill,
                                     const int* srcPtr, int* edgeDst, int* cnt, int* perm) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id();
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        for (int e = e0 + lane; e < e1; e += 32) {
            int j = indices[e];
            if (j < 0 || j >= bc.ns) continue;
            if (fill) {
                perm[srcPtr[j] + atomicSub(cnt + j, 1) - 1] = e;
            } else {
                edgeDst[e] = i;
                atomicAdd(cnt + j, 1);
            }
        }
    }
}

// cat_bwd_act: grid (column blocks, chunks), block (32, CAT_WARPS). Warp w
// of block (bx, b) takes source rows r0 + w, r0 + w + CAT_WARPS, ... below
// r1 = min(r0 + chunkRows, ns), r0 = b·chunkRows, and the columns of passes
// bx, bx + gridDim.x, ... of 32·CAT_NC words (lane + 32q of the pass). For
// row j:
//   g = dcat[j, :words] when j < nd (else 0), then
//       + edgeW[e]·dcat[edgeDst[e], words:] for p in [srcPtr[j], srcPtr[j+1])
//       in order (e = perm[p]);
//   dx[j] = g through the activation (act_bwd), stored as float32 or
//   bfloat16; partial[b, c] (may be null) = Σ of the block's rows of dx[:, c]
//   before rounding, each warp's rows in order and the warps' sums in order
//   of w, so column_sums makes a deterministic bias gradient. dcat rows are
//   2·words wide.
// A row's self part and mask are read first, beside its offsets, and its
// edges' rows CAT_E at a time. One pass of 32 words at a time keeps the
// registers few and so the warps per multiprocessor many: measured faster
// than two passes' worth at once, than reading the next rows' offsets and
// edge ids ahead, and than taking several rows at once (docs/perf.md).
#define CAT_NC 1
#define CAT_E 4
#define CAT_WARPS 8

template <typename V>
__device__ __forceinline__ void cat_bwd_act(const int* srcPtr, const int* perm, const int* edgeDst,
                                            const float* edgeW, const V* dcat, int words, int nd, int ns, int relu,
                                            int dropout, float scale, const V* y, int ybf16,
                                            const typename MaskOf<V>::T* mask, V* dx, int dxbf16, float* partial,
                                            int chunkRows) {
    typedef typename MaskOf<V>::T M;
    __shared__ V red[CAT_WARPS][32 * CAT_NC];
    int lane = lane_id(), w = threadIdx.y;
    int r0 = blockIdx.y * chunkRows;
    if (r0 >= ns) return;
    int r1 = min(r0 + chunkRows, ns);
    i64 stride = 2 * (i64)words;
    for (int cb = blockIdx.x * 32 * CAT_NC; cb < words; cb += gridDim.x * 32 * CAT_NC) {
        V s[CAT_NC];
#pragma unroll
        for (int q = 0; q < CAT_NC; q++) s[q] = V();
        for (int j = r0 + w; j < r1; j += CAT_WARPS) {
            V acc[CAT_NC];
            M m[CAT_NC];
#pragma unroll
            for (int q = 0; q < CAT_NC; q++) {
                int c = cb + q * 32 + lane;
                bool ok = c < words;
                acc[q] = ok && j < nd ? dcat[(i64)j * stride + c] : V();
                m[q] = ok && dropout ? mask[(i64)j * words + c] : M();
            }
            int a0 = srcPtr[j], a1 = srcPtr[j + 1];
            for (int pb = a0; pb < a1; pb += 32) {
                int i = 0;
                float ew = 0.f;
                if (pb + lane < a1) {
                    int e = perm[pb + lane];
                    i = edgeDst[e];
                    ew = edgeW[e];
                }
                int cnt = min(32, a1 - pb);
                for (int t = 0; t < cnt; t += CAT_E) {
                    int ii[CAT_E];
                    float ww[CAT_E];
#pragma unroll
                    for (int u = 0; u < CAT_E; u++) {
                        ii[u] = __shfl_sync(FULL_MASK, i, t + u);
                        ww[u] = __shfl_sync(FULL_MASK, ew, t + u);
                    }
#pragma unroll
                    for (int q = 0; q < CAT_NC; q++) {
                        int c = cb + q * 32 + lane;
                        if (c >= words) continue;
                        V d[CAT_E];
#pragma unroll
                        for (int u = 0; u < CAT_E; u++)
                            d[u] = t + u < cnt ? dcat[(i64)ii[u] * stride + words + c] : V();
#pragma unroll
                        for (int u = 0; u < CAT_E; u++)
                            if (t + u < cnt) acc[q] = vfma(ww[u], d[u], acc[q]);
                    }
                }
            }
#pragma unroll
            for (int q = 0; q < CAT_NC; q++) {
                int c = cb + q * 32 + lane;
                if (c >= words) continue;
                i64 idx = (i64)j * words + c;
                V yv = relu && !dropout ? load_as(y, idx, ybf16) : V();
                V g = act_bwd(acc[q], yv, m[q], relu, dropout, scale);
                store_as(dx, idx, g, dxbf16);
                s[q] = vadd(s[q], g);
            }
        }
        if (partial == 0) continue;
#pragma unroll
        for (int q = 0; q < CAT_NC; q++) red[w][q * 32 + lane] = s[q];
        __syncthreads();
        if (w == 0) {
#pragma unroll
            for (int q = 0; q < CAT_NC; q++) {
                int c = cb + q * 32 + lane;
                V t = V();
#pragma unroll
                for (int k = 0; k < CAT_WARPS; k++) t = vadd(t, red[k][q * 32 + lane]);
                if (c < words) ((V*)partial)[(i64)blockIdx.y * words + c] = t;
            }
        }
        __syncthreads();
    }
}

#define CAT_ARGS                                                                                                    \
    const int *srcPtr, const int *perm, const int *edgeDst, const float *edgeW, const int *nDstP, int dstCap,      \
        const int *nSrcP, int srcCap, int words, int relu, int dropout, float scale, int ybf16, int dxbf16,        \
        float *partial, int chunkRows

extern "C" __global__ void cat_bwd_act4(CAT_ARGS, const float4* dcat, const float4* y, const uchar4* mask,
                                        float4* dx) {
    cat_bwd_act<float4>(srcPtr, perm, edgeDst, edgeW, dcat, words, live_count(nDstP, dstCap),
                        live_count(nSrcP, srcCap), relu, dropout, scale, y, ybf16, mask, dx, dxbf16, partial,
                        chunkRows);
}
extern "C" __global__ void cat_bwd_act1(CAT_ARGS, const float* dcat, const float* y, const unsigned char* mask,
                                        float* dx) {
    cat_bwd_act<float>(srcPtr, perm, edgeDst, edgeW, dcat, words, live_count(nDstP, dstCap),
                       live_count(nSrcP, srcCap), relu, dropout, scale, y, ybf16, mask, dx, dxbf16, partial,
                       chunkRows);
}
