// gat_agg.cu: GAT's coefficient-weighted aggregation (HeadAggregate and its
// backward), the twins of backend/cpu/gat_agg.go; layout as in gat.cu.
//
// head_agg_{v4,v1}_{NQ} (head_agg_grp) and head_agg_bwd_{v4,v1}_{NQ}
// (head_agg_bwd_grp): a warp per destination; the lanes form one group of
// G = 2^gl lanes per head (G = 32 rounded down by the heads' power of two;
// lanes past heads·G idle), lane s of head h's group taking the head's
// words s, s + G, ... (float4 words when dim % 4 == 0 and the buffers are
// 16-byte aligned, else floats), at most NQ of them. Every head of a row
// moves in one pass, and the rows of up to HA_U positions are loaded
// before they are used, so that several are in flight; a warp's next
// destination's edge list loads while its current one's rows do (HaDest).
//   Forward: gridDim.y warps share a destination, each a slice of every
//   head's columns (HeadLanes: slice blockIdx.y, a lane's words G·gridDim.y
//   columns apart), so that a block of few destinations fills the device;
//   float32 sums with fmaf, the self loop then the edges in order (per
//   column the same operations as head_agg, at any slicing); with mean,
//   group 0 adds the heads' sums in head order (shuffles), times 1/heads.
//   Backward: gridDim.y warps share a destination, each a slice of its
//   positions (PosSlice: k = blockIdx.y + gridDim.y·m); the dout row of the
//   destination stays in registers; per position every lane adds its
//   words' products in float64 in word order, then a xor butterfly over
//   the group (log2 G steps; the same order for a given shape, at any
//   slicing), and dx gets w·dout through float atomics (16-byte reductions
//   on sm_90, vec.cuh) or not at all (dx null: the deterministic path's
//   head_agg_gather, or dcoef alone); with dcoef null, no products and no
//   reads of x (dx alone).
// head_agg, head_agg_bwd: the general kernels (any heads and width), used
// when the grouped ones do not fit: one warp per destination, lanes over
// output columns; the backward's dcoef per head with a warp-wide butterfly,
// its positions sliced over gridDim.y warps as the grouped one's.
// head_agg_gather: the deterministic dx over the edges sorted by source.
// bip (a bipartite block): no self loop, whose position reads as invalid;
// accumulate (the forward's acc): out += the result, one rounded add.
#include "common.cuh"
#include "vec.cuh"
#include "block.cuh"
#include "gat.cuh"
#include "gat_agg.cuh"

#define GAT_NC 4

// ha_store writes v to *o, or adds it (accumulate).
__device__ __forceinline__ void ha_store(float* o, float v, int accumulate) { *o = accumulate ? __fadd_rn(*o, v) : v; }

extern "C" __global__ void head_agg(HA_ARGS, int accumulate, const float* coef, const float* x, float* out) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id(), w = heads * dim;
    float invH = 1.0f / (float)heads;
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        const float* cs = coef + (i64)i * heads;
        const float* xs = x + (i64)i * w;
        if (!mean) {
            for (int cb = 0; cb < w; cb += 32 * GAT_NC) {
                float acc[GAT_NC];
#pragma unroll
                for (int q = 0; q < GAT_NC; q++) {
                    int c = cb + q * 32 + lane;
                    acc[q] = c < w && !bip ? __fmul_rn(cs[c / dim], xs[c]) : 0.f;
                }
                for (int e = e0; e < e1; e++) {
                    int j = indices[e];
                    if (j < 0 || j >= bc.ns) continue;
                    const float* ce = coef + ((i64)dstCap + e) * heads;
                    const float* xj = x + (i64)j * w;
#pragma unroll
                    for (int q = 0; q < GAT_NC; q++) {
                        int c = cb + q * 32 + lane;
                        if (c < w) acc[q] = fmaf(ce[c / dim], xj[c], acc[q]);
                    }
                }
#pragma unroll
                for (int q = 0; q < GAT_NC; q++) {
                    int c = cb + q * 32 + lane;
                    if (c < w) ha_store(out + (i64)i * w + c, acc[q], accumulate);
                }
            }
            continue;
        }
        for (int fb = 0; fb < dim; fb += 32 * GAT_NC) {
            float tot[GAT_NC];
            for (int h = 0; h < heads; h++) {
                float acc[GAT_NC];
#pragma unroll
                for (int q = 0; q < GAT_NC; q++) {
                    int f = fb + q * 32 + lane;
                    acc[q] = f < dim && !bip ? __fmul_rn(cs[h], xs[h * dim + f]) : 0.f;
                }
                for (int e = e0; e < e1; e++) {
                    int j = indices[e];
                    if (j < 0 || j >= bc.ns) continue;
                    float ce = coef[((i64)dstCap + e) * heads + h];
                    const float* xj = x + (i64)j * w + h * dim;
#pragma unroll
                    for (int q = 0; q < GAT_NC; q++) {
                        int f = fb + q * 32 + lane;
                        if (f < dim) acc[q] = fmaf(ce, xj[f], acc[q]);
                    }
                }
#pragma unroll
                for (int q = 0; q < GAT_NC; q++) tot[q] = h == 0 ? acc[q] : __fadd_rn(tot[q], acc[q]);
            }
#pragma unroll
            for (int q = 0; q < GAT_NC; q++) {
                int f = fb + q * 32 + lane;
                if (f < dim) ha_store(out + (i64)i * dim + f, __fmul_rn(tot[q], invH), accumulate);
            }
        }
    }
}

// head_agg_weight is the weight of position row, head h in dx's sums.
__device__ __forceinline__ float head_agg_weight(const float* coef, i64 row, int heads, int h, int mean) {
    float wg = coef[row * heads + h];
    return mean ? __fmul_rn(wg, 1.0f / (float)heads) : wg;
}

// head_agg_bwd: dcoef of every live position (0 for an edge whose source is
// not live) when dcoef is not null, and, when dx is not null, dx scattered
// with float atomics; the warps of grid row y take positions y, y +
// gridDim.y, ...
extern "C" __global__ void head_agg_bwd(HA_ARGS, const float* coef, const float* x, const float* dout, float* dcoef,
                                        float* dx) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id(), w = heads * dim, ow = mean ? dim : w;
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        const float* dr = dout + (i64)i * ow;
        for (int k = blockIdx.y; k < 1 + e1 - e0; k += gridDim.y) {
            int j = att_src(indices, i, e0, k, bc.ns, bip);
            i64 row = att_row(i, e0, k, dstCap);
            for (int h = 0; dcoef != 0 && h < heads; h++) {
                double s = 0.0;
                if (j >= 0) {
                    const float* xj = x + (i64)j * w + h * dim;
                    const float* d = mean ? dr : dr + h * dim;
                    for (int f = lane; f < dim; f += 32) s += (double)d[f] * (double)xj[f];
                }
                s = warp_sum_d(s);
                if (mean) s /= (double)heads;
                if (lane == 0) dcoef[row * heads + h] = (float)s;
            }
            if (dx == 0 || j < 0) continue;
            for (int c = lane; c < w; c += 32) {
                int h = c / dim;
                float d = dr[mean ? c - h * dim : c];
                atomicAdd(dx + (i64)j * w + c, __fmul_rn(head_agg_weight(coef, row, heads, h, mean), d));
            }
        }
    }
}

// head_agg_gather: for rows j < max(live dst, live src), dx[j, :] += the
// self loop's term (j < live dst; none, and rows < live src, in a
// bipartite block) and the terms of j's edges sorted by source, added in
// that order in float32.
extern "C" __global__ void head_agg_gather(const int* srcPtr, const int* perm, const int* edgeDst, const int* nDstP,
                                           int dstCap, const int* nSrcP, int srcCap, int bip, int heads, int dim,
                                           int mean, const float* coef, const float* dout, float* dx) {
    int nd = bip ? 0 : live_count(nDstP, dstCap);
    int rows = max(nd, live_count(nSrcP, srcCap));
    int lane = lane_id(), w = heads * dim, ow = mean ? dim : w;
    for (int j = gwarp(); j < rows; j += gwarps()) {
        int p0 = srcPtr[j], p1 = srcPtr[j + 1];
        for (int c = lane; c < w; c += 32) {
            int h = c / dim, f = mean ? c - h * dim : c;
            float acc = 0.f;
            if (j < nd) acc = __fmul_rn(head_agg_weight(coef, j, heads, h, mean), dout[(i64)j * ow + f]);
            for (int p = p0; p < p1; p++) {
                int e = perm[p];
                float wg = head_agg_weight(coef, (i64)dstCap + e, heads, h, mean);
                acc = fmaf(wg, dout[(i64)edgeDst[e] * ow + f], acc);
            }
            i64 at = (i64)j * w + c;
            dx[at] = __fadd_rn(dx[at], acc);
        }
    }
}

// ha_load takes the U positions from u0 of the chunk at pb (cnt live in
// it) of the slice ps of destination i: their sources (-1 past cnt), their
// coefficients for the lane's head (0 when !withCoef) and the lane's words
// of each source's row (0 when !withX), every load issued before any is
// used.
template <typename V, int NQ, int U>
__device__ __forceinline__ void ha_load(int jl, int u0, int cnt, int i, int e0, int pb, PosSlice ps, int dstCap,
                                        int heads, int dimV, const HeadLanes& L, bool withCoef, bool withX,
                                        const float* coef, const V* x, int (&jj)[U], float (&cw)[U],
                                        V (&xv)[U][NQ]) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        jj[u] = __shfl_sync(FULL_MASK, jl, (u0 + u) & 31);
        if (u0 + u >= cnt) jj[u] = -1;
        cw[u] = withCoef && jj[u] >= 0 && L.on ? coef[att_row(i, e0, ps.at(pb + u0 + u), dstCap) * heads + L.h]
                                               : 0.f;
#pragma unroll
        for (int k = 0; k < NQ; k++) {
            int c = L.col(k);
            xv[u][k] = withX && jj[u] >= 0 && c >= 0 ? x[(i64)jj[u] * L.wV + L.h * dimV + c] : V();
        }
    }
}

template <typename V, int NQ>
__device__ __forceinline__ void head_agg_grp(const int* indptr, const int* indices, BlockCounts bc, int dstCap,
                                             int bip, int heads, int dimV, int gl, int mean, int accumulate,
                                             const float* coef, const V* x, V* out) {
    const int U = HA_U(V, NQ);
    const PosSlice all = {0, 1};
    HeadLanes L = head_lanes(heads, dimV, gl, blockIdx.y, gridDim.y);
    float invH = 1.0f / (float)heads;
    int G = gwarps(), p0, p1;
    HaDest cur = ha_first(indptr, indices, bc, bip, all);
    for (int i = gwarp(); i < bc.n; i += G) {
        int e0 = cur.e0, np = cur.np;
        ha_ptr(indptr, bc, i + G, &p0, &p1);
        V acc[NQ];
#pragma unroll
        for (int k = 0; k < NQ; k++) acc[k] = V();
        for (int pb = 0; pb < np; pb += 32) {
            int jl = pb == 0 ? cur.jl : att_sources(indices, i, e0, pb, np, bc.ns, bip);
            int cnt = min(32, np - pb);
            for (int u0 = 0; u0 < cnt; u0 += U) {
                int jj[U];
                float cw[U];
                V xv[U][NQ];
                ha_load<V, NQ, U>(jl, u0, cnt, i, e0, pb, all, dstCap, heads, dimV, L, true, true, coef, x, jj, cw, xv);
                if (pb == 0 && u0 == 0) cur = ha_dest(indices, bc, bip, i + G, p0, p1, all);  // the next one
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (jj[u] < 0) continue;
                    bool self = pb + u0 + u == 0;
#pragma unroll
                    for (int k = 0; k < NQ; k++)
                        acc[k] = self ? vmul_rn(cw[u], xv[u][k]) : vfma(cw[u], xv[u][k], acc[k]);
                }
            }
        }
        if (!mean) {
#pragma unroll
            for (int k = 0; k < NQ; k++) {
                int c = L.col(k);
                if (c < 0) continue;
                V* o = out + (i64)i * L.wV + L.h * dimV + c;
                *o = accumulate ? vadd_rn(*o, acc[k]) : acc[k];
            }
            continue;
        }
#pragma unroll
        for (int k = 0; k < NQ; k++) {
            V tot = vshfl(acc[k], L.s);
            for (int h = 1; h < heads; h++) tot = vadd_rn(tot, vshfl(acc[k], (h << gl) + L.s));
            int c = L.col(k);
            if (L.h != 0 || c < 0) continue;
            V* o = out + (i64)i * dimV + c;
            *o = accumulate ? vadd_rn(*o, vmul_rn(invH, tot)) : vmul_rn(invH, tot);
        }
    }
}

template <typename V, int NQ>
__device__ __forceinline__ void head_agg_bwd_grp(const int* indptr, const int* indices, BlockCounts bc, int dstCap,
                                                 int bip, int heads, int dimV, int gl, int mean, const float* coef,
                                                 const V* x, const V* dout, float* dcoef, V* dx) {
    const int U = HA_U(V, NQ);
    const PosSlice ps = {(int)blockIdx.y, (int)gridDim.y};
    HeadLanes L = head_lanes(heads, dimV, gl);
    float invH = 1.0f / (float)heads;
    int G = gwarps(), p0, p1;
    HaDest cur = ha_first(indptr, indices, bc, bip, ps);
    for (int i = gwarp(); i < bc.n; i += G) {
        int e0 = cur.e0, np = cur.np, nm = ps.count(np);
        ha_ptr(indptr, bc, i + G, &p0, &p1);
        if (nm == 0) {  // no position of this slice
            cur = ha_dest(indices, bc, bip, i + G, p0, p1, ps);
            continue;
        }
        V d[NQ];
#pragma unroll
        for (int k = 0; k < NQ; k++) {
            int c = L.col(k);
            d[k] = c < 0 ? V() : mean ? dout[(i64)i * dimV + c] : dout[(i64)i * L.wV + L.h * dimV + c];
        }
        for (int pb = 0; pb < nm; pb += 32) {
            int jl = pb == 0 ? cur.jl : att_sources(indices, i, e0, pb, np, bc.ns, bip, ps.c, ps.p);
            int cnt = min(32, nm - pb);
            for (int u0 = 0; u0 < cnt; u0 += U) {
                int jj[U];
                float cw[U];
                V xv[U][NQ];
                ha_load<V, NQ, U>(jl, u0, cnt, i, e0, pb, ps, dstCap, heads, dimV, L, dx != 0, dcoef != 0, coef, x, jj,
                                  cw, xv);
                if (pb == 0 && u0 == 0) cur = ha_dest(indices, bc, bip, i + G, p0, p1, ps);  // the next one
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (u0 + u >= cnt) break;
                    if (dcoef) {
                        double s = 0.0;
#pragma unroll
                        for (int k = 0; k < NQ; k++) s = vdot_d(d[k], xv[u][k], s);
                        for (int o = (1 << gl) >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
                        if (mean) s /= (double)heads;
                        int k = ps.at(pb + u0 + u);
                        if (L.on && L.s == 0) dcoef[att_row(i, e0, k, dstCap) * heads + L.h] = (float)s;
                    }
                    if (!dx || jj[u] < 0) continue;
                    float wg = mean ? __fmul_rn(cw[u], invH) : cw[u];
#pragma unroll
                    for (int q = 0; q < NQ; q++) {
                        int c = L.col(q);
                        if (c >= 0) vatomic_add(dx + (i64)jj[u] * L.wV + L.h * dimV + c, wg, d[q]);
                    }
                }
            }
        }
    }
}

// HA_GRP declares a grouped kernel pair, launched in blocks of 256, with
// FB and BB the forward's and the backward's launch bounds (left empty:
// none): two blocks an SM for the 8-word kernels, which would otherwise
// take 140-220 registers (one block an SM for the widest) and fit 128 with
// at most a few bytes spilled; one for the other forwards; none for the
// other backwards, which compile unbounded as they did before any bound:
// bounded, even by the threads alone, ptxas lays them out with more
// registers (head_agg_bwd_v4_2: 122 against 116 for sm_80), and
// head_agg_bwd_v4_2 on a middle block (no position slices) went from 70
// to 83 µs.
#define HA_GRP(FB, BB, V, NQ, SUF)                                                                                \
    extern "C" __global__ void                                                                                    \
    FB head_agg_##SUF(HA_ARGS, int accumulate, int gl, const float* coef, const V* x, V* out) {                   \
        head_agg_grp<V, NQ>(indptr, indices, block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap), dstCap,    \
                            bip, heads, dim, gl, mean, accumulate, coef, x, out);                                 \
    }                                                                                                             \
    extern "C" __global__ void                                                                                    \
    BB head_agg_bwd_##SUF(HA_ARGS, int gl, const float* coef, const V* x, const V* dout, float* dcoef, V* dx) {   \
        head_agg_bwd_grp<V, NQ>(indptr, indices, block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap),        \
                                dstCap, bip, heads, dim, gl, mean, coef, x, dout, dcoef, dx);                     \
    }

// The grouped kernels take dim in words (dim/4 for v4).
HA_GRP(__launch_bounds__(256, 1), , float4, 2, v4_2)
HA_GRP(__launch_bounds__(256, 1), , float4, 4, v4_4)
HA_GRP(__launch_bounds__(256, 2), __launch_bounds__(256, 2), float4, 8, v4_8)
HA_GRP(__launch_bounds__(256, 1), , float, 2, v1_2)
HA_GRP(__launch_bounds__(256, 1), , float, 4, v1_4)
HA_GRP(__launch_bounds__(256, 2), __launch_bounds__(256, 2), float, 8, v1_8)
