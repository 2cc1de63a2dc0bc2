// aggregate.cu: block aggregation, CSR by destination. For live destination i:
//   out[i, :] = selfW[i] * x[i, :] + sum_{e in row i} edgeW[e] * x[indices[e], :]
// and its backward (scatter with float atomicAdd: not bitwise deterministic;
// aggregate_det.cu is the deterministic alternative). aggregate_cat* writes
// GraphSAGE's concatenation instead: out rows of 2 * dim, x[i, :] then the
// sum (no self term).
// One warp per destination; lanes cover a row's columns as float4
// (aggregate_*4, when dim % 4 == 0 and addresses are 16-byte aligned) or
// float words, up to AGG_NC chunks of 32 words per pass. Edge offsets are
// clamped to [0, live edges]; edges whose source lies outside [0, live
// sources) are skipped. selfW and edgeW may be null (no self term; weight 1).
// With meanW (the forward kernels only) each edge's weight is instead
// 1 / (its destination's sampled degree), written to meanW as mean_weights
// would (the launch that fuses MeanWeights with the aggregation after it).
// A row source says where source j's row lies (Rows: x's own rows or a
// feature table's; TieredSrc: a tiered store's cache, or the gathered
// miss), so the table and tiered kernels are this one aggregation.
#include "common.cuh"
#include "bf16.cuh"
#include "vec.cuh"
#include "block.cuh"

#define AGG_NC 2
#define AGG_U 4
// NO_ROW is a row source's reference to no row: the source is skipped.
#define NO_ROW (-1)

// edge_info loads edge eb+lane's source (or -1) and weight: mean when
// positive, else edgeW's (1 without edgeW).
__device__ __forceinline__ void edge_info(const int* indices, const float* edgeW, float mean, int e, int e1, int ns,
                                          int* j, float* w) {
    *j = -1;
    *w = 0.f;
    if (e < e1) {
        int s = indices[e];
        if (s >= 0 && s < ns) {
            *j = s;
            *w = mean > 0.f ? mean : (edgeW ? edgeW[e] : 1.0f);
        }
    }
}

// Rows are the source rows of an aggregation: row(j) is where source j's
// row lies (NO_ROW: skip it), load(r, c) its vector c, widened to float32
// (bf16.cuh). W is the stored vector (float4 / float; uint2 / ushort for
// bfloat16); outputs are stored with put (bf16.cuh). With
// ids null they are x's own rows; otherwise (aggregate_cat_table*) a
// feature table's row ids[j] (the block's SrcIDs), checked against rows.
template <typename W>
struct Rows {
    const W* t;
    const int* ids;
    i64 rows;
    int vecs;
    int* err;
    __device__ __forceinline__ Rows(const W* t_, const int* ids_, i64 rows_, int vecs_, int* err_)
        : t(t_), ids(ids_), rows(rows_), vecs(vecs_), err(err_) {}
    __device__ __forceinline__ int row(int j) const {
        if (ids == 0) return j;
        int id = ids[j];
        if (id < 0 || id >= rows) {
            report_error(err, ERR_TABLE_ID, j, id, (int)(rows > INT32_MAX_ ? INT32_MAX_ : rows));
            return NO_ROW;
        }
        return id;
    }
    __device__ __forceinline__ typename Wide<W>::type load(int r, int c) const { return to_float(t[(i64)r * vecs + c]); }
};

// TieredSrc are the source rows of a tiered store read in place
// (aggregate_cat_tiered*): source j's row is cache row slot[ids[j]] when
// that is >= 0, else x's row j (the gathered miss, float32). row(j) is the
// cache row, or -2 - j for x's row j; the choice in load is the same for a
// warp's lanes (they load one row's vectors).
template <typename W>
struct TieredSrc {
    typedef typename Wide<W>::type X;
    const W* cache;
    const X* x;
    const int* ids;
    const int* slot;
    i64 rows;  // the slot table's
    int vecs;
    int* err;
    __device__ __forceinline__ TieredSrc(const W* cache_, const X* x_, const int* ids_, const int* slot_, i64 rows_,
                                         int vecs_, int* err_)
        : cache(cache_), x(x_), ids(ids_), slot(slot_), rows(rows_), vecs(vecs_), err(err_) {}
    __device__ __forceinline__ int row(int j) const {
        int id = ids[j];
        if (id < 0 || id >= rows) {
            report_error(err, ERR_TIERED_ID, j, id, (int)(rows > INT32_MAX_ ? INT32_MAX_ : rows));
            return NO_ROW;
        }
        int s = slot[id];
        return s >= 0 ? s : -2 - j;
    }
    __device__ __forceinline__ X load(int r, int c) const {
        return r >= 0 ? to_float(cache[(i64)r * vecs + c]) : x[(i64)(-2 - r) * vecs + c];
    }
};

// aggregate_fwd: with CAT, out rows hold 2 * vecs vectors, x[i, :] then the
// sum; otherwise vecs, the sum alone. O is the stored output vector. NC
// chunks of 32 vectors per pass over the edges.
template <typename V, bool CAT, typename R, typename O, int NC = AGG_NC>
__device__ __forceinline__ void aggregate_fwd(const int* indptr, const int* indices, const float* edgeW,
                                              const float* selfW, float* meanW, R x, int vecs, BlockCounts bc,
                                              O* out) {
    int lane = lane_id();
    const int outVecs = CAT ? 2 * vecs : vecs;
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        O* o = out + (i64)i * outVecs;
        int ri = x.row(i);
        if (CAT) {
            for (int c = lane; c < vecs; c += 32) put(o, c, ri != NO_ROW ? x.load(ri, c) : V());
            o += vecs;
        }
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        float s = selfW ? selfW[i] : 0.f;
        float mean = meanW && e1 > e0 ? 1.0f / (float)(e1 - e0) : 0.f;
        for (int cb = 0; cb < vecs; cb += 32 * NC) {
            V acc[NC];
#pragma unroll
            for (int q = 0; q < NC; q++) {
                int c = cb + q * 32 + lane;
                acc[q] = V();
                if (selfW && c < vecs && ri != NO_ROW) acc[q] = vscale(s, x.load(ri, c));
            }
            for (int eb = e0; eb < e1; eb += 32) {
                int j;
                float w;
                edge_info(indices, edgeW, mean, eb + lane, e1, bc.ns, &j, &w);
                if (meanW && cb == 0 && eb + lane < e1) meanW[eb + lane] = mean;
                j = j >= 0 ? x.row(j) : NO_ROW;
                int cnt = min(32, e1 - eb);
                for (int k = 0; k < cnt; k += AGG_U) {
                    int jj[AGG_U];
                    float ww[AGG_U];
#pragma unroll
                    for (int u = 0; u < AGG_U; u++) {
                        jj[u] = __shfl_sync(FULL_MASK, j, k + u);
                        ww[u] = __shfl_sync(FULL_MASK, w, k + u);
                        if (k + u >= cnt) jj[u] = NO_ROW;
                    }
#pragma unroll
                    for (int q = 0; q < NC; q++) {
                        int c = cb + q * 32 + lane;
                        if (c >= vecs) continue;
                        V xv[AGG_U];
#pragma unroll
                        for (int u = 0; u < AGG_U; u++) xv[u] = jj[u] != NO_ROW ? x.load(jj[u], c) : V();
#pragma unroll
                        for (int u = 0; u < AGG_U; u++)
                            if (jj[u] != NO_ROW) acc[q] = vfma(ww[u], xv[u], acc[q]);
                    }
                }
            }
#pragma unroll
            for (int q = 0; q < NC; q++) {
                int c = cb + q * 32 + lane;
                if (c < vecs) put(o, c, acc[q]);
            }
        }
    }
}

template <typename V>
__device__ __forceinline__ void aggregate_bwd(const int* indptr, const int* indices, const float* edgeW,
                                              const float* selfW, const V* dout, int vecs, BlockCounts bc, V* dx) {
    int lane = lane_id();
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        float s = selfW ? selfW[i] : 0.f;
        for (int cb = 0; cb < vecs; cb += 32 * AGG_NC) {
            V d[AGG_NC];
#pragma unroll
            for (int q = 0; q < AGG_NC; q++) {
                int c = cb + q * 32 + lane;
                d[q] = c < vecs ? dout[(i64)i * vecs + c] : V();
                if (selfW && c < vecs) vatomic_add(dx + (i64)i * vecs + c, s, d[q]);
            }
            for (int eb = e0; eb < e1; eb += 32) {
                int j;
                float w;
                edge_info(indices, edgeW, 0.f, eb + lane, e1, bc.ns, &j, &w);
                int cnt = min(32, e1 - eb);
                for (int k = 0; k < cnt; k++) {
                    int jj = __shfl_sync(FULL_MASK, j, k);
                    float ww = __shfl_sync(FULL_MASK, w, k);
                    if (jj < 0) continue;
#pragma unroll
                    for (int q = 0; q < AGG_NC; q++) {
                        int c = cb + q * 32 + lane;
                        if (c < vecs) vatomic_add(dx + (i64)jj * vecs + c, ww, d[q]);
                    }
                }
            }
        }
    }
}

#define AGG_ARGS                                                                                                    \
    const int *indptr, const int *indices, const float *edgeW, const float *selfW, float *meanW, const int *nDstP, \
        int dstCap, const int *nEP, int edgeCap, const int *nSrcP, int srcCap, int vecs
#define AGG_COUNTS block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap)

extern "C" __global__ void aggregate_fwd4(AGG_ARGS, const float4* x, float4* out) {
    aggregate_fwd<float4, false>(indptr, indices, edgeW, selfW, meanW, Rows<float4>(x, 0, 0, vecs, 0), vecs, AGG_COUNTS, out);
}
extern "C" __global__ void aggregate_fwd1(AGG_ARGS, const float* x, float* out) {
    aggregate_fwd<float, false>(indptr, indices, edgeW, selfW, meanW, Rows<float>(x, 0, 0, vecs, 0), vecs, AGG_COUNTS, out);
}
extern "C" __global__ void aggregate_cat4(AGG_ARGS, const float4* x, float4* out) {
    aggregate_fwd<float4, true>(indptr, indices, edgeW, (const float*)0, meanW, Rows<float4>(x, 0, 0, vecs, 0), vecs,
                                AGG_COUNTS, out);
}
extern "C" __global__ void aggregate_cat1(AGG_ARGS, const float* x, float* out) {
    aggregate_fwd<float, true>(indptr, indices, edgeW, (const float*)0, meanW, Rows<float>(x, 0, 0, vecs, 0), vecs,
                               AGG_COUNTS, out);
}

// aggregate_cat_table*: aggregate_cat reading source j's row from a feature
// table at row ids[j] (the block's SrcIDs), or from x's own rows when ids is
// null: f32x4 / f32x1 for float32 tables, bf16x4 / bf16x1 for bfloat16 ones;
// the _obf16 kernels round the output to bfloat16. An id outside the table
// is reported and its row read as zeros.
#define AGG_TABLE_ARGS AGG_ARGS, const int *ids, i64 tableRows, int *err
template <int NC, typename W, typename O>
__device__ __forceinline__ void aggregate_cat_table(AGG_TABLE_ARGS, const W* table, O* out) {
    aggregate_fwd<typename Wide<W>::type, true, Rows<W>, O, NC>(indptr, indices, edgeW, (const float*)0, meanW,
                                                               Rows<W>(table, ids, tableRows, vecs, err), vecs,
                                                               AGG_COUNTS, out);
}
// Each 16-byte kernel has a twin, name_n1, with one chunk of 32 words per
// pass: fewer registers and so more warps per multiprocessor, for rows of
// at most 32 words (measured faster on the bottom layer's 100 bfloat16
// features; docs/perf.md). The _n1 kernels are held to six blocks per
// multiprocessor (40 registers): the meanW path had taken them to 44 and
// five blocks, which made the bottom layer's aggregation 17% slower. The
// loader finds kernels by their spelled-out declarations, so each is
// written out.
#define AGG_TABLE_CALL(NC)                                                                                          \
    aggregate_cat_table<NC>(indptr, indices, edgeW, selfW, meanW, nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap, vecs, \
                            ids, tableRows, err, table, out)
extern "C" __global__ void aggregate_cat_table_f32x4(AGG_TABLE_ARGS, const float4* table, float4* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_table_f32x4_n1(AGG_TABLE_ARGS, const float4* table, float4* out) {
    AGG_TABLE_CALL(1);
}
extern "C" __global__ void aggregate_cat_table_f32x1(AGG_TABLE_ARGS, const float* table, float* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_cat_table_bf16x4(AGG_TABLE_ARGS, const uint2* table, float4* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_table_bf16x4_n1(AGG_TABLE_ARGS, const uint2* table, float4* out) {
    AGG_TABLE_CALL(1);
}
extern "C" __global__ void aggregate_cat_table_bf16x1(AGG_TABLE_ARGS, const unsigned short* table, float* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_cat_table_f32x4_obf16(AGG_TABLE_ARGS, const float4* table, uint2* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_table_f32x4_obf16_n1(AGG_TABLE_ARGS, const float4* table, uint2* out) {
    AGG_TABLE_CALL(1);
}
extern "C" __global__ void aggregate_cat_table_f32x1_obf16(AGG_TABLE_ARGS, const float* table, unsigned short* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_cat_table_bf16x4_obf16(AGG_TABLE_ARGS, const uint2* table, uint2* out) {
    AGG_TABLE_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_table_bf16x4_obf16_n1(AGG_TABLE_ARGS, const uint2* table, uint2* out) {
    AGG_TABLE_CALL(1);
}
extern "C" __global__ void aggregate_cat_table_bf16x1_obf16(AGG_TABLE_ARGS, const unsigned short* table, unsigned short* out) {
    AGG_TABLE_CALL(AGG_NC);
}
// aggregate_cat_tiered*: aggregate_cat over a tiered store's rows in place
// (TieredSrc): source j's row from the cache where slot[ids[j]] >= 0, else
// x's row j (the gathered miss, float32): f32x4 / f32x1 for float32 caches,
// bf16x4 / bf16x1 for bfloat16 ones, _obf16 rounding the output, _n1 one
// chunk of 32 words per pass, as the table kernels. An id outside the slot
// table is reported and its row read as zeros.
#define AGG_TIERED_ARGS AGG_ARGS, const int *ids, const int *slot, i64 slotRows, int *err
template <int NC, typename W, typename O>
__device__ __forceinline__ void aggregate_cat_tiered(AGG_TIERED_ARGS, const W* cache,
                                                     const typename Wide<W>::type* x, O* out) {
    aggregate_fwd<typename Wide<W>::type, true, TieredSrc<W>, O, NC>(
        indptr, indices, edgeW, (const float*)0, meanW, TieredSrc<W>(cache, x, ids, slot, slotRows, vecs, err), vecs,
        AGG_COUNTS, out);
}
#define AGG_TIERED_CALL(NC)                                                                                          \
    aggregate_cat_tiered<NC>(indptr, indices, edgeW, selfW, meanW, nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap, vecs, \
                             ids, slot, slotRows, err, cache, x, out)
extern "C" __global__ void aggregate_cat_tiered_f32x4(AGG_TIERED_ARGS, const float4* cache, const float4* x, float4* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_tiered_f32x4_n1(AGG_TIERED_ARGS, const float4* cache, const float4* x, float4* out) {
    AGG_TIERED_CALL(1);
}
extern "C" __global__ void aggregate_cat_tiered_f32x1(AGG_TIERED_ARGS, const float* cache, const float* x, float* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_cat_tiered_bf16x4(AGG_TIERED_ARGS, const uint2* cache, const float4* x, float4* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_tiered_bf16x4_n1(AGG_TIERED_ARGS, const uint2* cache, const float4* x, float4* out) {
    AGG_TIERED_CALL(1);
}
extern "C" __global__ void aggregate_cat_tiered_bf16x1(AGG_TIERED_ARGS, const unsigned short* cache, const float* x, float* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_cat_tiered_f32x4_obf16(AGG_TIERED_ARGS, const float4* cache, const float4* x, uint2* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_tiered_f32x4_obf16_n1(AGG_TIERED_ARGS, const float4* cache, const float4* x, uint2* out) {
    AGG_TIERED_CALL(1);
}
extern "C" __global__ void aggregate_cat_tiered_f32x1_obf16(AGG_TIERED_ARGS, const float* cache, const float* x, unsigned short* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_cat_tiered_bf16x4_obf16(AGG_TIERED_ARGS, const uint2* cache, const float4* x, uint2* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void __launch_bounds__(256, 6) aggregate_cat_tiered_bf16x4_obf16_n1(AGG_TIERED_ARGS, const uint2* cache, const float4* x, uint2* out) {
    AGG_TIERED_CALL(1);
}
extern "C" __global__ void aggregate_cat_tiered_bf16x1_obf16(AGG_TIERED_ARGS, const unsigned short* cache, const float* x, unsigned short* out) {
    AGG_TIERED_CALL(AGG_NC);
}
extern "C" __global__ void aggregate_bwd4(AGG_ARGS, const float4* dout, float4* dx) {
    aggregate_bwd<float4>(indptr, indices, edgeW, selfW, dout, vecs, AGG_COUNTS, dx);
}
extern "C" __global__ void aggregate_bwd1(AGG_ARGS, const float* dout, float* dx) {
    aggregate_bwd<float>(indptr, indices, edgeW, selfW, dout, vecs, AGG_COUNTS, dx);
}

// mean_weights: edgeW[e] = 1 / (sampled degree of e's destination).
extern "C" __global__ void mean_weights(const int* indptr, const int* nDstP, int dstCap, const int* nEP, int edgeCap,
                                        float* edgeW) {
    int n = live_count(nDstP, dstCap), ne = live_count(nEP, edgeCap), lane = lane_id();
    for (int i = gwarp(); i < n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, ne, &e0, &e1);
        if (e1 == e0) continue;
        float w = 1.0f / (float)(e1 - e0);
        for (int e = e0 + lane; e < e1; e += 32) edgeW[e] = w;
    }
}

// gcn_weights: with d = srcDeg + 1 and s_i the sampled degree:
// selfW[i] = 1/d_i, edgeW[e] = (srcDeg[i]/s_i)/sqrt(d_i d_j), in float64
// like the CPU backend, rounded once to float32.
extern "C" __global__ void gcn_weights(const int* indptr, const int* indices, const float* srcDeg, const int* nDstP,
                                       int dstCap, const int* nEP, int edgeCap, const int* nSrcP, int srcCap,
                                       float* edgeW, float* selfW) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id();
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        double di = (double)srcDeg[i] + 1.0;
        if (lane == 0) selfW[i] = (float)(1.0 / di);
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        if (e1 == e0) continue;
        double scale = (double)srcDeg[i] / (double)(e1 - e0);
        for (int e = e0 + lane; e < e1; e += 32) {
            int j = indices[e];
            if (j < 0 || j >= bc.ns) continue;
            edgeW[e] = (float)(scale / sqrt(di * ((double)srcDeg[j] + 1.0)));
        }
    }
}
