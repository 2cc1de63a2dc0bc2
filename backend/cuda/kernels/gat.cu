// gat.cu: graph attention (GAT) ops, the twins of backend/cpu/gat.go and
// gat_agg.go (see backend.Attention for the contracts and the coefficient
// layout: row i < dstCap is destination i's self loop, row dstCap + e is
// edge e; position k = 0 is the self loop, k = 1 + e - e0 edge e).
//
// head_dot: one warp per row; per head the lanes add a stride of columns in
//   float64, then a xor butterfly (every lane ends with the same bits).
// head_dot_bwd: dx += dout x a element-wise and the partial sums of da per
//   chunk of rows, like bias_act_dropout_bwd; column_sums (dense.cu) adds
//   the chunks in a fixed order.
// edge_softmax(_bwd): one warp per destination, per head: the lanes take a
//   stride of positions; max, then the sum of exponentials in float64, then
//   the coefficients (and, backward, Σ α g, then the logits' gradients).
//   The backward recomputes the coefficients and the dropout words with the
//   same code, so they are the forward's bits. Dropout: element (i, k, h)
//   is kept iff word q % 4 of Philox(key_i, q / 4, step, epoch<<8|stream),
//   q = k * heads + h, is >= thr. The gradient of el is scattered to the
//   sources with float atomics (del zeroed first), or, deterministic, kept
//   per position in float64 (dt) and gathered per source (gat_del_gather)
//   after the edges are sorted by source (aggregate_det.cu).
// head_agg: one warp per destination, lanes over output columns, float32
//   sums with fmaf: the self loop, then the edges in order.
// head_agg_bwd: one warp per destination; for each position and head the
//   lanes add a stride of the head's columns in float64 (dcoef: the dot of
//   dout with the source's row), then scatter into dx with float atomics
//   (or not: head_agg_gather is the deterministic alternative over the
//   edges sorted by source).
#include "common.cuh"
#include "block.cuh"
#include "rng.cuh"

#define GAT_NC 4

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ float warp_max_f(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

extern "C" __global__ void head_dot(const float* x, const int* nP, int cap, int heads, int dim, const float* a,
                                    float* out) {
    int n = live_count(nP, cap), lane = lane_id();
    i64 w = (i64)heads * dim;
    for (int i = gwarp(); i < n; i += gwarps()) {
        const float* xr = x + (i64)i * w;
        for (int h = 0; h < heads; h++) {
            double s = 0.0;
            for (int f = lane; f < dim; f += 32) s += (double)xr[h * dim + f] * (double)a[h * dim + f];
            s = warp_sum_d(s);
            if (lane == 0) out[(i64)i * heads + h] = (float)s;
        }
    }
}

// head_dot_bwd: grid (ceil(w/32), chunks), block (32, 8); thread (x, y) of
// block (bx, by) takes column 32*bx + x and rows r0 + y, r0 + y + 8, ... of
// chunk by; partial is [chunks, w].
extern "C" __global__ void head_dot_bwd(const float* x, const float* dout, const int* nP, int cap, int heads, int dim,
                                        const float* a, float* dx, float* partial, int chunkRows) {
    __shared__ double red[8][33];
    int n = live_count(nP, cap), w = heads * dim;
    int c = blockIdx.x * 32 + threadIdx.x;
    int r0 = blockIdx.y * chunkRows;
    if (r0 >= n) return;
    int r1 = min(r0 + chunkRows, n);
    double s = 0.0;
    if (c < w) {
        int h = c / dim;
        float av = a[c];
        for (int r = r0 + threadIdx.y; r < r1; r += 8) {
            i64 idx = (i64)r * w + c;
            float g = dout[(i64)r * heads + h];
            dx[idx] = __fadd_rn(dx[idx], __fmul_rn(g, av));
            s += (double)g * (double)x[idx];
        }
    }
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < w) {
        double t = 0.0;
#pragma unroll
        for (int k = 0; k < 8; k++) t += red[k][threadIdx.x];
        partial[(i64)blockIdx.y * w + c] = (float)t;
    }
}

// att_src is the source of position k of destination i (e0: its first
// edge), or -1 for an edge whose source is not live.
__device__ __forceinline__ int att_src(const int* indices, int i, int e0, int k, int ns) {
    if (k == 0) return i;
    int j = indices[e0 + k - 1];
    return (j >= 0 && j < ns) ? j : -1;
}

// att_row is the coefficient row of position k of destination i.
__device__ __forceinline__ i64 att_row(int i, int e0, int k, int dstCap) {
    return k == 0 ? (i64)i : (i64)dstCap + e0 + k - 1;
}

__device__ __forceinline__ float leaky(float t, float slope) { return t > 0.f ? t : __fmul_rn(slope, t); }

#define ATT_ARGS                                                                                                    \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,              \
        const int *nSrcP, int srcCap, const float *el, const float *er, int heads, float slope, int dropout, u32 thr, \
        float scale, u64 seed, const int *clock, u32 stream, const int *keys

// AttHead is one destination's softmax over its positions for one head.
struct AttHead {
    const int* indices;
    const float* el;
    int i, e0, np, ns, heads, h;
    float er, slope;
    float m;     // largest score
    double sum;  // Σ exp(score - m)
};

// score is the LeakyReLU score of position k with source j (valid).
__device__ __forceinline__ float att_score(const AttHead& a, int j) {
    return leaky(__fadd_rn(a.el[(i64)j * a.heads + a.h], a.er), a.slope);
}

// att_head fills the softmax's max and sum; every lane of the warp calls it.
__device__ __forceinline__ AttHead att_head(const int* indices, const float* el, const float* er, int i, int e0,
                                            int e1, int ns, int heads, int h, float slope) {
    AttHead a;
    a.indices = indices, a.el = el, a.i = i, a.e0 = e0, a.np = 1 + e1 - e0, a.ns = ns, a.heads = heads, a.h = h;
    a.er = er[(i64)i * heads + h], a.slope = slope;
    float m = -__int_as_float(0x7f800000);
    for (int k = lane_id(); k < a.np; k += 32) {
        int j = att_src(indices, i, e0, k, ns);
        if (j >= 0) m = fmaxf(m, att_score(a, j));
    }
    a.m = warp_max_f(m);
    double s = 0.0;
    for (int k = lane_id(); k < a.np; k += 32) {
        int j = att_src(indices, i, e0, k, ns);
        if (j >= 0) s += exp((double)att_score(a, j) - (double)a.m);
    }
    a.sum = warp_sum_d(s);
    return a;
}

// att_alpha is the coefficient of a valid position with source j.
__device__ __forceinline__ float att_alpha(const AttHead& a, int j) {
    return (float)(exp((double)att_score(a, j) - (double)a.m) / a.sum);
}

// AttDrop is the attention dropout of a launch: element q of the row with
// Philox index idx is kept iff word q % 4 of Philox(idx, q / 4, step, hi)
// is >= thr, and kept values are scaled by scale.
struct AttDrop {
    int on;
    u32 thr, step, hi;
    float scale;
    u64 seed;
};

__device__ __forceinline__ AttDrop att_drop(int on, u32 thr, float scale, u64 seed, const int* clock, u32 stream) {
    AttDrop d;
    d.on = on, d.thr = thr, d.scale = scale, d.seed = seed, d.step = 0, d.hi = 0;
    if (on) {
        d.step = (u32)clock[1];
        d.hi = rand_hi(clock, stream);
    }
    return d;
}

// att_apply is v after dropout: v * scale when element q is kept, else 0.
__device__ __forceinline__ float att_apply(const AttDrop& d, float v, u32 idx, int q) {
    if (!d.on) return v;
    uint4 w = philox4x32_10(make_uint4(idx, (u32)q >> 2, d.step, d.hi), (u32)d.seed, (u32)(d.seed >> 32));
    return philox_word(w, q & 3) >= d.thr ? __fmul_rn(v, d.scale) : 0.f;
}

extern "C" __global__ void edge_softmax(ATT_ARGS, float* coef) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    AttDrop drop = att_drop(dropout, thr, scale, seed, clock, stream);
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        u32 idx = keys ? (u32)keys[i] : (u32)i;
        for (int h = 0; h < heads; h++) {
            AttHead a = att_head(indices, el, er, i, e0, e1, bc.ns, heads, h, slope);
            for (int k = lane_id(); k < a.np; k += 32) {
                int j = att_src(indices, i, e0, k, bc.ns);
                float v = j >= 0 ? att_alpha(a, j) : 0.f;
                coef[att_row(i, e0, k, dstCap) * heads + h] = att_apply(drop, v, idx, k * heads + h);
            }
        }
    }
}

// edge_softmax_bwd writes der and either adds the gradient of el into del
// with atomics (dt null; del zeroed before) or keeps it per position in dt
// (F64 [dstCap + edgeCap, heads]) for gat_del_gather.
extern "C" __global__ void edge_softmax_bwd(ATT_ARGS, const float* dcoef, float* del, float* der, double* dt) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    AttDrop drop = att_drop(dropout, thr, scale, seed, clock, stream);
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        u32 idx = keys ? (u32)keys[i] : (u32)i;
        for (int h = 0; h < heads; h++) {
            AttHead a = att_head(indices, el, er, i, e0, e1, bc.ns, heads, h, slope);
            double s = 0.0;
            for (int k = lane_id(); k < a.np; k += 32) {
                int j = att_src(indices, i, e0, k, bc.ns);
                if (j < 0) continue;
                i64 at = att_row(i, e0, k, dstCap) * heads + h;
                s += (double)att_alpha(a, j) * (double)att_apply(drop, dcoef[at], idx, k * heads + h);
            }
            s = warp_sum_d(s);
            double sum = 0.0;
            for (int k = lane_id(); k < a.np; k += 32) {
                int j = att_src(indices, i, e0, k, bc.ns);
                i64 at = att_row(i, e0, k, dstCap) * heads + h;
                double t = 0.0;
                if (j >= 0) {
                    double g = (double)att_apply(drop, dcoef[at], idx, k * heads + h);
                    t = (double)att_alpha(a, j) * (g - s);
                    if (!(__fadd_rn(el[(i64)j * heads + h], a.er) > 0.f)) t *= (double)slope;
                }
                if (dt)
                    dt[at] = t;
                else if (j >= 0)
                    atomicAdd(del + (i64)j * heads + h, (float)t);
                sum += t;
            }
            sum = warp_sum_d(sum);
            if (lane_id() == 0) der[(i64)i * heads + h] = (float)sum;
        }
    }
}

// gat_del_gather: del[j, h] = Σ dt over the positions whose source is j:
// the self loop (j < live dst) first, then the edges sorted by source, in
// float64. One thread per (row, head) for rows < max(live dst, live src).
extern "C" __global__ void gat_del_gather(const int* srcPtr, const int* perm, const double* dt, const int* nDstP,
                                          int dstCap, const int* nSrcP, int srcCap, int heads, float* del) {
    int nd = live_count(nDstP, dstCap);
    int rows = max(nd, live_count(nSrcP, srcCap));
    i64 total = (i64)rows * heads;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int j = (int)(t / heads), h = (int)(t - (i64)j * heads);
        double s = j < nd ? dt[(i64)j * heads + h] : 0.0;
        for (int p = srcPtr[j]; p < srcPtr[j + 1]; p++) s += dt[((i64)dstCap + perm[p]) * heads + h];
        del[t] = (float)s;
    }
}

#define HA_ARGS                                                                                                   \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,            \
        const int *nSrcP, int srcCap, int heads, int dim, int mean

extern "C" __global__ void head_agg(HA_ARGS, const float* coef, const float* x, float* out) {
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
                    acc[q] = c < w ? __fmul_rn(cs[c / dim], xs[c]) : 0.f;
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
                    if (c < w) out[(i64)i * w + c] = acc[q];
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
                    acc[q] = f < dim ? __fmul_rn(cs[h], xs[h * dim + f]) : 0.f;
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
                if (f < dim) out[(i64)i * dim + f] = __fmul_rn(tot[q], invH);
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
// not live) and, when dx is not null, dx scattered with float atomics.
extern "C" __global__ void head_agg_bwd(HA_ARGS, const float* coef, const float* x, const float* dout, float* dcoef,
                                        float* dx) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id(), w = heads * dim, ow = mean ? dim : w;
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        const float* dr = dout + (i64)i * ow;
        for (int k = 0; k < 1 + e1 - e0; k++) {
            int j = att_src(indices, i, e0, k, bc.ns);
            i64 row = att_row(i, e0, k, dstCap);
            for (int h = 0; h < heads; h++) {
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
// self loop's term (j < live dst) and the terms of j's edges sorted by
// source, added in that order in float32.
extern "C" __global__ void head_agg_gather(const int* srcPtr, const int* perm, const int* edgeDst, const int* nDstP,
                                           int dstCap, const int* nSrcP, int srcCap, int heads, int dim, int mean,
                                           const float* coef, const float* dout, float* dx) {
    int nd = live_count(nDstP, dstCap);
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
