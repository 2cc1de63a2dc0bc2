// gat.cu: graph attention (GAT) ops, the twins of backend/cpu/gat.go and
// gat_agg.go (see backend.Attention for the contracts and the coefficient
// layout: row i < dstCap is destination i's self loop, row dstCap + e is
// edge e; position k = 0 is the self loop, k = 1 + e - e0 edge e). The
// block kernels take bip, a bipartite block's flag: no self loop (its
// position is invalid, as an edge with a source past the live ones is).
//
// head_dot: one warp per row; per head the lanes add a stride of columns in
//   float64, then a xor butterfly (every lane ends with the same bits);
//   head_dot_{v4,v1}_{NQ} the same with one lane group per head (the
//   shapes that fit: up to 32 heads, 8 words per lane).
// head_dot_bwd(_v4): dx += dout x a element-wise and the partial sums of da per
//   chunk of rows, like bias_act_dropout_bwd, for two score vectors (a GAT
//   layer's source and destination scores) in one pass over x and dx;
//   column_sums (dense.cu) adds the chunks in a fixed order.
// edge_softmax(_bwd): one thread per (destination, head), taking the
//   positions in order (a sampled block's few positions would leave most of
//   a warp idle); a list of more than ATT_LONG positions takes a whole warp
//   per head instead, the lanes a stride of positions, reduced by xor
//   butterflies. Max, then the sum of exponentials in float64, then the
//   coefficients (and, backward, Σ α g, then the logits' gradients).
//   The backward recomputes the coefficients and the dropout words with the
//   same code, so they are the forward's bits. Dropout: element (i, k, h)
//   is kept iff word q % 4 of Philox(key_i, q / 4, step, epoch<<8|stream),
//   q = k * heads + h, is >= thr. The gradient of el is scattered to the
//   sources with float atomics (del zeroed first), or, deterministic, kept
//   per position in float64 (dt) and gathered per source (gat_del_gather)
//   after the edges are sorted by source (aggregate_det.cu).
// head_agg(_bwd), head_agg_gather: see gat_agg.cu.
#include "common.cuh"
#include "vec.cuh"
#include "block.cuh"
#include "rng.cuh"
#include "gat.cuh"

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

// head_dot_{v4,v1}_{NQ}: head_dot with the lanes grouped per head
// (HeadLanes, gat.cuh): a row's heads load in one pass; per lane float64
// products in word order, then a xor butterfly over the group. Where a row
// takes at most 32 bytes of a lane, a warp loads two rows (i and i + the
// grid's warps) before it adds either, twice the bytes in flight; each
// row's sums are the same.
template <typename V, int NQ>
__device__ __forceinline__ void head_dot_grp(const V* x, int n, int heads, int dimV, int gl, const V* a,
                                             float* out) {
    const int R = NQ * (int)sizeof(V) <= 32 ? 2 : 1;
    HeadLanes L = head_lanes(heads, dimV, gl);
    V av[NQ];
#pragma unroll
    for (int k = 0; k < NQ; k++) {
        int c = L.col(k);
        av[k] = c >= 0 ? a[L.h * dimV + c] : V();
    }
    int G = gwarps();
    for (int i0 = gwarp(); i0 < n; i0 += R * G) {
        V xv[R][NQ];
#pragma unroll
        for (int r = 0; r < R; r++) {
            int i = i0 + r * G;
#pragma unroll
            for (int k = 0; k < NQ; k++) {
                int c = L.col(k);
                xv[r][k] = c >= 0 && i < n ? x[(i64)i * L.wV + L.h * dimV + c] : V();
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            int i = i0 + r * G;
            double s = 0.0;
#pragma unroll
            for (int k = 0; k < NQ; k++) s = vdot_d(xv[r][k], av[k], s);
            for (int o = (1 << gl) >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
            if (i < n && L.on && L.s == 0) out[(i64)i * heads + L.h] = (float)s;
        }
    }
}

#define HD_GRP(V, NQ, SUF)                                                                                 \
    extern "C" __global__ void head_dot_##SUF(const V* x, const int* nP, int cap, int heads, int dimV, int gl, \
                                              const V* a, float* out) {                                   \
        head_dot_grp<V, NQ>(x, live_count(nP, cap), heads, dimV, gl, a, out);                               \
    }
HD_GRP(float4, 2, v4_2)
HD_GRP(float4, 4, v4_4)
HD_GRP(float4, 8, v4_8)
HD_GRP(float, 2, v1_2)
HD_GRP(float, 4, v1_4)
HD_GRP(float, 8, v1_8)

// vc is component c of a float (c = 0) or a float4 word.
__device__ __forceinline__ float vc(float v, int) { return v; }
__device__ __forceinline__ float vc(float4 v, int c) { return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w; }
__device__ __forceinline__ void vc_set(float& v, int, float f) { v = f; }
__device__ __forceinline__ void vc_set(float4& v, int c, float f) {
    if (c == 0) v.x = f;
    else if (c == 1) v.y = f;
    else if (c == 2) v.z = f;
    else v.w = f;
}

// head_dot_bwd, head_dot_bwd_v4: grid (ceil(wV/32), chunks), block (32, 8),
// wV = w words of V (floats, or float4 when dim % 4 == 0 and x, dx are
// 16-byte aligned, a quarter of the instructions per byte); thread (x, y)
// of block (bx, by) takes word 32*bx + x and rows r0 + y, r0 + y + 8, ...
// of chunk by, over rows [:n1] with (dout1, a1, partial1) and over rows
// [:n2] with (dout2, a2, partial2) of the same x and dx in one pass: dx =
// (dx + g1·a1) + g2·a2, each term where its rows reach (the loads of U rows
// go out before their stores: 8 floats, or 4 float4 words, which keeps a
// thread's registers low enough for three blocks an SM; sums in row order,
// per column, then over y in order: both widths write the same bits);
// partial1 and partial2 are [chunks, w]; chunks over max(n1, n2) rows.
template <typename V, int U>
__device__ __forceinline__ void head_dot_bwd_t(const V* x, const float* dout1, const float* dout2, int n1, int n2,
                                               int heads, int dim, const float* a1, const float* a2, V* dx,
                                               float* partial1, float* partial2, int chunkRows) {
    const int NC = sizeof(V) / sizeof(float);
    __shared__ double red[2][NC][8][33];
    int w = heads * dim, wV = w / NC;
    int c = blockIdx.x * 32 + threadIdx.x;
    int r0 = blockIdx.y * chunkRows;
    if (r0 >= max(n1, n2)) return;
    int r1 = min(r0 + chunkRows, max(n1, n2)), m1 = min(r1, n1), m2 = min(r1, n2);
    double s1[NC], s2[NC];
#pragma unroll
    for (int q = 0; q < NC; q++) s1[q] = s2[q] = 0.0;
    if (c < wV) {
        int h = c * NC / dim;
        V av1, av2;
#pragma unroll
        for (int q = 0; q < NC; q++) vc_set(av1, q, a1[c * NC + q]), vc_set(av2, q, a2[c * NC + q]);
        for (int rb = r0 + threadIdx.y; rb < r1; rb += 8 * U) {
            float g1[U], g2[U];
            V xv[U], dv[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                int r = rb + 8 * u;
                i64 idx = (i64)r * wV + c;
                g1[u] = r < m1 ? dout1[(i64)r * heads + h] : 0.f;
                g2[u] = r < m2 ? dout2[(i64)r * heads + h] : 0.f;
                xv[u] = r < r1 ? x[idx] : V();
                dv[u] = r < r1 ? dx[idx] : V();
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                int r = rb + 8 * u;
                if (r >= r1) break;
                V v = dv[u];
#pragma unroll
                for (int q = 0; q < NC; q++) {
                    float f = vc(v, q), xq = vc(xv[u], q);
                    if (r < m1) {
                        f = __fadd_rn(f, __fmul_rn(g1[u], vc(av1, q)));
                        s1[q] += (double)g1[u] * (double)xq;
                    }
                    if (r < m2) {
                        f = __fadd_rn(f, __fmul_rn(g2[u], vc(av2, q)));
                        s2[q] += (double)g2[u] * (double)xq;
                    }
                    vc_set(v, q, f);
                }
                dx[(i64)r * wV + c] = v;
            }
        }
    }
#pragma unroll
    for (int q = 0; q < NC; q++) red[0][q][threadIdx.y][threadIdx.x] = s1[q], red[1][q][threadIdx.y][threadIdx.x] = s2[q];
    __syncthreads();
    if (threadIdx.y < 2 && c < wV) {
        int p = threadIdx.y;
        if (r0 >= (p == 0 ? n1 : n2)) return;
#pragma unroll
        for (int q = 0; q < NC; q++) {
            double t = 0.0;
#pragma unroll
            for (int k = 0; k < 8; k++) t += red[p][q][k][threadIdx.x];
            (p == 0 ? partial1 : partial2)[(i64)blockIdx.y * w + c * NC + q] = (float)t;
        }
    }
}

#define HD_BWD_ARGS                                                                                            \
    const int *n1P, int cap1, const int *n2P, int cap2, int heads, int dim, const float *a1, const float *a2
extern "C" __global__ void head_dot_bwd(const float* x, const float* dout1, const float* dout2, HD_BWD_ARGS,
                                         float* dx, float* partial1, float* partial2, int chunkRows) {
    head_dot_bwd_t<float, 8>(x, dout1, dout2, live_count(n1P, cap1), live_count(n2P, cap2), heads, dim, a1, a2, dx,
                          partial1, partial2, chunkRows);
}
extern "C" __global__ void head_dot_bwd_v4(const float4* x, const float* dout1, const float* dout2, HD_BWD_ARGS,
                                            float4* dx, float* partial1, float* partial2, int chunkRows) {
    head_dot_bwd_t<float4, 4>(x, dout1, dout2, live_count(n1P, cap1), live_count(n2P, cap2), heads, dim, a1, a2, dx,
                           partial1, partial2, chunkRows);
}

__device__ __forceinline__ float leaky(float t, float slope) { return t > 0.f ? t : __fmul_rn(slope, t); }

#define ATT_ARGS                                                                                             \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,       \
        const int *nSrcP, int srcCap, int bip, const float *el, const float *er, int heads, float slope,    \
        int dropout, u32 thr, float scale, u64 seed, const int *clock, u32 stream, const int *keys

// AttHead is one destination's softmax over its positions for one head.
struct AttHead {
    const int* indices;
    const float* el;
    int i, e0, np, ns, bip, heads, h;
    float er, slope;
    float m;     // largest score
    double sum;  // Σ exp(score - m)
};

// score is the LeakyReLU score of position k with source j (valid).
__device__ __forceinline__ float att_score(const AttHead& a, int j) {
    return leaky(__fadd_rn(a.el[(i64)j * a.heads + a.h], a.er), a.slope);
}

// ATT_LONG: destinations with up to this many positions take one thread per
// head (the positions in order); longer lists take a whole warp per head
// (the lanes a stride of positions each, then xor butterflies). The choice
// depends on the positions only, so a destination's forward and backward
// take the same path and the same bits.
#define ATT_LONG 32

// att_head fills the softmax's max and sum of destination i, head h over
// the positions k0, k0 + dk, ...: dk = 1 (one thread, sums in position
// order) or dk = 32 (every lane of the warp calls it with k0 = its lane).
__device__ __forceinline__ AttHead att_head(const int* indices, const float* el, const float* er, int i, int e0,
                                            int e1, int ns, int bip, int heads, int h, float slope, int k0, int dk) {
    AttHead a;
    a.indices = indices, a.el = el, a.i = i, a.e0 = e0, a.np = 1 + e1 - e0, a.ns = ns, a.bip = bip;
    a.heads = heads, a.h = h;
    a.er = er[(i64)i * heads + h], a.slope = slope;
    float m = -__int_as_float(0x7f800000);
#pragma unroll 4
    for (int k = k0; k < a.np; k += dk) {
        int j = att_src(indices, i, e0, k, ns, bip);
        if (j >= 0) m = fmaxf(m, att_score(a, j));
    }
    a.m = dk > 1 ? warp_max_f(m) : m;
    double s = 0.0;
#pragma unroll 4
    for (int k = k0; k < a.np; k += dk) {
        int j = att_src(indices, i, e0, k, ns, bip);
        if (j >= 0) s += exp((double)att_score(a, j) - (double)a.m);
    }
    a.sum = dk > 1 ? warp_sum_d(s) : s;
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

// AttTask is one (destination, head) of the softmax kernels: its
// positions k0, k0 + dk, ... belong to this thread (dk = 1) or to this lane
// of the warp (dk = 32, a long list).
struct AttTask {
    int i, h, e0, e1, k0, dk;
};

// att_sweep calls body(task) for every live (destination, head) pair:
// thread t of the grid takes pair t (destination t / heads, head t %
// heads, so that a warp's loads of el, er and coef rows are adjacent) when
// its destination has at most ATT_LONG positions; the pairs of longer
// lists that a warp meets are then taken by the whole warp, one after the
// other. The sweep is warp-uniform (1-D blocks of a multiple of 32).
template <typename Body>
__device__ __forceinline__ void att_sweep(const int* indptr, BlockCounts bc, int heads, Body& body) {
    i64 total = (i64)bc.n * heads;
    int lane = lane_id();
    for (i64 base = (i64)gwarp() * 32; base < total; base += (i64)gwarps() * 32) {
        i64 t = base + lane;
        AttTask a = {0, 0, 0, 0, 0, 1};
        bool on = t < total;
        if (on) {
            a.i = (int)(t / heads), a.h = (int)(t - (i64)a.i * heads);
            edge_range(indptr, a.i, bc.ne, &a.e0, &a.e1);
        }
        bool lng = on && 1 + a.e1 - a.e0 > ATT_LONG;
        if (on && !lng) body(a);
        u32 longs = __ballot_sync(FULL_MASK, lng);
        while (longs) {
            int l = __ffs(longs) - 1;
            longs &= longs - 1;
            AttTask w = {__shfl_sync(FULL_MASK, a.i, l), __shfl_sync(FULL_MASK, a.h, l),
                         __shfl_sync(FULL_MASK, a.e0, l), __shfl_sync(FULL_MASK, a.e1, l), lane, 32};
            body(w);
        }
    }
}

// EsFwd writes one task's coefficients (edge_softmax).
struct EsFwd {
    const int *indices, *keys;
    const float *el, *er;
    BlockCounts bc;
    int dstCap, bip, heads;
    float slope;
    AttDrop drop;
    float* coef;
    __device__ __forceinline__ void operator()(const AttTask& t) const {
        AttHead a = att_head(indices, el, er, t.i, t.e0, t.e1, bc.ns, bip, heads, t.h, slope, t.k0, t.dk);
        u32 idx = keys ? (u32)keys[t.i] : (u32)t.i;
        for (int k = t.k0; k < a.np; k += t.dk) {
            int j = att_src(indices, t.i, t.e0, k, bc.ns, bip);
            float v = j >= 0 ? att_alpha(a, j) : 0.f;
            coef[att_row(t.i, t.e0, k, dstCap) * heads + t.h] = att_apply(drop, v, idx, k * heads + t.h);
        }
    }
};

extern "C" __global__ void edge_softmax(ATT_ARGS, float* coef) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    EsFwd f = {indices, keys, el, er, bc, dstCap, bip, heads, slope,
               att_drop(dropout, thr, scale, seed, clock, stream), coef};
    att_sweep(indptr, bc, heads, f);
}

// EsBwd writes one task's der and its positions' gradients of el: added
// into del with atomics (dt null; del zeroed before) or kept per position
// in dt (F64 [dstCap + edgeCap, heads]) for gat_del_gather.
struct EsBwd {
    const int *indices, *keys;
    const float *el, *er, *dcoef;
    BlockCounts bc;
    int dstCap, bip, heads;
    float slope;
    AttDrop drop;
    float *del, *der;
    double* dt;
    __device__ __forceinline__ void operator()(const AttTask& t) const {
        AttHead a = att_head(indices, el, er, t.i, t.e0, t.e1, bc.ns, bip, heads, t.h, slope, t.k0, t.dk);
        u32 idx = keys ? (u32)keys[t.i] : (u32)t.i;
        double s = 0.0;
        for (int k = t.k0; k < a.np; k += t.dk) {
            int j = att_src(indices, t.i, t.e0, k, bc.ns, bip);
            if (j < 0) continue;
            i64 at = att_row(t.i, t.e0, k, dstCap) * heads + t.h;
            s += (double)att_alpha(a, j) * (double)att_apply(drop, dcoef[at], idx, k * heads + t.h);
        }
        if (t.dk > 1) s = warp_sum_d(s);
        double sum = 0.0;
        for (int k = t.k0; k < a.np; k += t.dk) {
            int j = att_src(indices, t.i, t.e0, k, bc.ns, bip);
            i64 at = att_row(t.i, t.e0, k, dstCap) * heads + t.h;
            double d = 0.0;  // the gradient of the position's logit
            if (j >= 0) {
                double g = (double)att_apply(drop, dcoef[at], idx, k * heads + t.h);
                d = (double)att_alpha(a, j) * (g - s);
                if (!(__fadd_rn(el[(i64)j * heads + t.h], a.er) > 0.f)) d *= (double)slope;
            }
            if (dt)
                dt[at] = d;
            else if (j >= 0)
                atomicAdd(del + (i64)j * heads + t.h, (float)d);
            sum += d;
        }
        if (t.dk > 1) sum = warp_sum_d(sum);
        if (t.k0 == 0) der[(i64)t.i * heads + t.h] = (float)sum;
    }
};

extern "C" __global__ void edge_softmax_bwd(ATT_ARGS, const float* dcoef, float* del, float* der, double* dt) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    EsBwd f = {indices, keys, el, er, dcoef, bc, dstCap, bip, heads, slope,
               att_drop(dropout, thr, scale, seed, clock, stream), del, der, dt};
    att_sweep(indptr, bc, heads, f);
}

// gat_del_gather: del[j, h] = Σ dt over the positions whose source is j:
// the self loop (j < live dst; none in a bipartite block) first, then the
// edges sorted by source, in float64. One thread per (row, head) for rows
// < max(live dst, live src) (live src in a bipartite block).
extern "C" __global__ void gat_del_gather(const int* srcPtr, const int* perm, const double* dt, const int* nDstP,
                                          int dstCap, const int* nSrcP, int srcCap, int bip, int heads, float* del) {
    int nd = bip ? 0 : live_count(nDstP, dstCap);
    int rows = max(nd, live_count(nSrcP, srcCap));
    i64 total = (i64)rows * heads;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int j = (int)(t / heads), h = (int)(t - (i64)j * heads);
        double s = j < nd ? dt[(i64)j * heads + h] : 0.0;
        for (int p = srcPtr[j]; p < srcPtr[j + 1]; p++) s += dt[((i64)dstCap + perm[p]) * heads + h];
        del[t] = (float)s;
    }
}
