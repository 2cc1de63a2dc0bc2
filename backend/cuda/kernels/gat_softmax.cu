// gat_softmax.cu: GAT's edge softmax (EdgeSoftmax and its backward), the
// twins of backend/cpu/gat.go; layout as in gat.cu (position k = 0 the
// self loop, none in a bipartite block, then the edges in order).
//
// edge_softmax(_bwd): a warp takes up to 32 (destination, head) tasks at
//   a time (AttTask; att_sweep), one a lane, and each by the length np of
//   its list (self loop included): up to ATT_SHORT positions by its own
//   lane (W = 1), all kept in registers; up to ATT_LONG = ATT_G·ATT_R by a
//   group of ATT_G lanes (W = 8), four tasks at a time; longer lists by
//   the whole warp (W = 32), one at a time. Lane s of a task's W lanes
//   takes positions k = s, s + W, ...: each position's source and score
//   are loaded once, the lane's first R positions kept in registers
//   (AttLane), further ones (the warp's past 32·ATT_R) loaded again where
//   used; the maximum and the sum of exponentials (float64, one exp per
//   position) go by xor butterflies over the W lanes, then the
//   coefficients (and, backward, Σ α g, then the logits' gradients, each
//   sum per lane in position order, then the butterfly). The path, and so
//   the order of every sum, depends on np alone: the backward recomputes
//   the forward's coefficients with the same code, bit for bit, at any
//   capacity or grid.
//   Dropout: element (i, k, h) is kept iff word q % 4 of Philox(key_i, q /
//   4, step, epoch<<8|stream), q = k * heads + h, is >= thr. The gradient
//   of el is scattered to the sources with float atomics (del zeroed
//   first), or, deterministic, kept per position in float64 (dt) and
//   gathered per source (gat_del_gather) after the edges are sorted by
//   source (aggregate_det.cu).
#include "common.cuh"
#include "block.cuh"
#include "rng.cuh"
#include "gat.cuh"

// ATT_SHORT positions at most a task of one lane (all kept); ATT_G lanes
// per task of up to ATT_LONG positions, ATT_R positions a lane kept in
// registers (two). Both kernels are bounded to 64 registers, four blocks
// of 256 an SM (the lane's path, eight positions kept, sets the bound).
// backend/cuda/gat.go's attPerWarp chooses the tasks a warp takes at a
// time through the grid (att_per).
#define ATT_SHORT 8
#define ATT_G 8
#define ATT_R 2
#define ATT_LONG (ATT_G * ATT_R)

// grp_max_f and grp_sum_d reduce over aligned groups of W lanes by xor
// butterflies: every lane of a group ends with the same bits. All 32 lanes
// of the warp must call them.
template <int W>
__device__ __forceinline__ float grp_max_f(float v) {
#pragma unroll
    for (int o = W >> 1; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}
template <int W>
__device__ __forceinline__ double grp_sum_d(double v) {
#pragma unroll
    for (int o = W >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ float leaky(float t, float slope) { return t > 0.f ? t : __fmul_rn(slope, t); }

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

#define ATT_ARGS                                                                                             \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,       \
        const int *nSrcP, int srcCap, int bip, const float *el, const float *er, int heads, float slope,    \
        int dropout, u32 thr, float scale, u64 seed, const int *clock, u32 stream, const int *keys

// AttCtx is a launch's block and scores: el F32 [srcCap, heads], er F32
// [dstCap, heads]; keys the dropout index per destination (null: its row).
struct AttCtx {
    const int *indices, *keys;
    const float *el, *er;
    BlockCounts bc;
    int dstCap, bip, heads;
    float slope;
    AttDrop drop;
};

// AttTask is one (destination i, head h): its first edge e0 and its np
// positions (np = 0: no task; a group without one still takes part in the
// butterflies).
struct AttTask {
    int i, h, e0, np;
};

// AttLane is one lane's share of a task's softmax over a group of W lanes:
// the positions k = s + r·W, those with r < R kept: source j (-1 when
// invalid or past np), coefficient before dropout al (0 when invalid), and
// bit r of pos set where el + er > 0 (LeakyReLU's gradient is 1).
template <int R>
struct AttLane {
    int s;
    float er, m;  // the destination's score; the largest score
    double sum;   // Σ exp(score - m) over the task's valid positions
    int j[R];
    float al[R];
    u32 pos;
};

// att_tail: only the warp's tasks (W = 32) have positions past the W·R a
// lane keeps (np <= ATT_SHORT at W = 1, <= ATT_LONG at W = ATT_G).
template <int W>
__device__ __forceinline__ bool att_tail() {
    return W == 32;
}

// att_pre is el_j + er (float32, rounded once): LeakyReLU's input.
__device__ __forceinline__ float att_pre(const AttCtx& c, const AttTask& t, int j, float er) {
    return __fadd_rn(c.el[(i64)j * c.heads + t.h], er);
}

// att_softmax fills a: the maximum and the sum over the task's positions
// (every lane of the group ends with the same bits) and the lane's kept
// positions, their sources loaded before any score. With W > 1 all 32
// lanes of the warp call it with the same W; W = 1 has no shuffles.
template <int W, int R>
__device__ __forceinline__ void att_softmax(const AttCtx& c, const AttTask& t, int s, AttLane<R>& a) {
    const float NEG = -__int_as_float(0x7f800000);
    a.s = s, a.pos = 0;
    a.er = t.np > 0 ? c.er[(i64)t.i * c.heads + t.h] : 0.f;
    float sc[R], m = NEG;
#pragma unroll
    for (int r = 0; r < R; r++) {
        int k = s + r * W;
        a.j[r] = k < t.np ? att_src(c.indices, t.i, t.e0, k, c.bc.ns, c.bip) : -1;
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        sc[r] = NEG;
        if (a.j[r] >= 0) {
            float p = att_pre(c, t, a.j[r], a.er);
            if (p > 0.f) a.pos |= 1u << r;
            sc[r] = leaky(p, c.slope);
            m = fmaxf(m, sc[r]);
        }
    }
    if (att_tail<W>())
        for (int k = s + R * W; k < t.np; k += W) {
            int j = att_src(c.indices, t.i, t.e0, k, c.bc.ns, c.bip);
            if (j >= 0) m = fmaxf(m, leaky(att_pre(c, t, j, a.er), c.slope));
        }
    a.m = grp_max_f<W>(m);
    double ex[R], sum = 0.0;
#pragma unroll
    for (int r = 0; r < R; r++) {
        ex[r] = a.j[r] >= 0 ? exp((double)sc[r] - (double)a.m) : 0.0;
        sum += ex[r];
    }
    if (att_tail<W>())
        for (int k = s + R * W; k < t.np; k += W) {
            int j = att_src(c.indices, t.i, t.e0, k, c.bc.ns, c.bip);
            if (j >= 0) sum += exp((double)leaky(att_pre(c, t, j, a.er), c.slope) - (double)a.m);
        }
    a.sum = grp_sum_d<W>(sum);
#pragma unroll
    for (int r = 0; r < R; r++) a.al[r] = a.j[r] >= 0 ? (float)(ex[r] / a.sum) : 0.f;
}

// att_each calls f(k, j, al, pos, r) for each of the lane's positions k in
// order: r the kept slot, or -1 for a position past them, whose source and
// coefficient are loaded and computed again (the same bits as kept ones).
template <int W, int R, typename F>
__device__ __forceinline__ void att_each(const AttCtx& c, const AttTask& t, const AttLane<R>& a, F& f) {
#pragma unroll
    for (int r = 0; r < R; r++) {
        int k = a.s + r * W;
        if (k < t.np) f(k, a.j[r], a.al[r], ((a.pos >> r) & 1u) != 0, r);
    }
    if (!att_tail<W>()) return;
    for (int k = a.s + R * W; k < t.np; k += W) {
        int j = att_src(c.indices, t.i, t.e0, k, c.bc.ns, c.bip);
        float al = 0.f, p = 0.f;
        if (j >= 0) {
            p = att_pre(c, t, j, a.er);
            al = (float)(exp((double)leaky(p, c.slope) - (double)a.m) / a.sum);
        }
        f(k, j, al, p > 0.f, -1);
    }
}

// att_key is the task's dropout index (0 without dropout).
__device__ __forceinline__ u32 att_key(const AttCtx& c, const AttTask& t) {
    if (!c.drop.on || t.np == 0) return 0;
    return c.keys ? (u32)c.keys[t.i] : (u32)t.i;
}

// att_per is the tasks a warp takes at a time: the least power of two
// from 4 to 32 with which the grid's warps cover the capacity's dstCap·heads
// tasks in one sweep (32 past that; gat.go's attPerWarp sizes the grid).
__device__ __forceinline__ int att_per(int dstCap, int heads) {
    int per = 4;
    while (per < 32 && (i64)per * gwarps() < (i64)dstCap * heads) per <<= 1;
    return per;
}

// att_task is task t of the total live (destination, head) pairs
// (destination t / heads, head t % heads; np = 0 past them).
__device__ __forceinline__ AttTask att_task(const int* indptr, BlockCounts bc, int heads, i64 total, i64 t) {
    AttTask a = {0, 0, 0, 0};
    if (t >= total) return a;
    int e1;
    if (total <= INT32_MAX_)  // a 32-bit division where it fits
        a.i = (int)t / heads, a.h = (int)t - a.i * heads;
    else
        a.i = (int)(t / heads), a.h = (int)(t - (i64)a.i * heads);
    edge_range(indptr, a.i, bc.ne, &a.e0, &e1);
    a.np = 1 + e1 - a.e0;
    return a;
}

// att_shfl is lane l's task.
__device__ __forceinline__ AttTask att_shfl(const AttTask& a, int l) {
    AttTask w = {__shfl_sync(FULL_MASK, a.i, l), __shfl_sync(FULL_MASK, a.h, l), __shfl_sync(FULL_MASK, a.e0, l),
                 __shfl_sync(FULL_MASK, a.np, l)};
    return w;
}

// att_sweep calls body.run<W, R>(task, lane among its W) for every live
// (destination, head) pair: a warp's lanes l < per (att_per) take pairs
// base + l; each short task runs on its lane (W = 1); then the medium
// ones (ballot) by the groups of ATT_G lanes, group q taking the q-th
// lowest of those left; then the long ones by the whole warp, one after
// the other. Every lane reaches every shuffle (1-D blocks of a multiple
// of 32).
template <typename Body>
__device__ __forceinline__ void att_sweep(const int* indptr, BlockCounts bc, int dstCap, int heads, const Body& body) {
    const int GW = 32 / ATT_G;  // groups a warp
    i64 total = (i64)bc.n * heads;
    int per = att_per(dstCap, heads), lane = lane_id();
    for (i64 base = (i64)gwarp() * per; base < total; base += (i64)gwarps() * per) {
        AttTask a = att_task(indptr, bc, heads, total, lane < per ? base + lane : total);
        if (a.np > 0 && a.np <= ATT_SHORT) body.template run<1, ATT_SHORT>(a, 0);
        u32 mid = __ballot_sync(FULL_MASK, a.np > ATT_SHORT && a.np <= ATT_LONG);
        while (mid) {
            u32 m = mid;
            for (int q = 0; q < lane / ATT_G; q++) m &= m - 1;
            AttTask g = att_shfl(a, m ? __ffs(m) - 1 : 0);
            if (!m) g.np = 0;
            body.template run<ATT_G, ATT_R>(g, lane % ATT_G);
            for (int q = 0; q < GW; q++) mid &= mid - 1;
        }
        u32 longs = __ballot_sync(FULL_MASK, a.np > ATT_LONG);
        while (longs) {
            int l = __ffs(longs) - 1;
            longs &= longs - 1;
            body.template run<32, ATT_R>(att_shfl(a, l), lane);
        }
    }
}

// EsPut writes a position's coefficient after dropout (0 where invalid).
struct EsPut {
    const AttCtx& c;
    const AttTask& t;
    u32 idx;
    float* coef;
    __device__ __forceinline__ void operator()(int k, int j, float al, bool, int) const {
        float v = j >= 0 ? att_apply(c.drop, al, idx, k * c.heads + t.h) : 0.f;
        coef[att_row(t.i, t.e0, k, c.dstCap) * c.heads + t.h] = v;
    }
};

// EsFwd writes a task's coefficients (edge_softmax).
struct EsFwd {
    AttCtx c;
    float* coef;
    template <int W, int R>
    __device__ __forceinline__ void run(const AttTask& t, int s) const {
        AttLane<R> a;
        att_softmax<W>(c, t, s, a);
        EsPut put = {c, t, att_key(c, t), coef};
        att_each<W>(c, t, a, put);
    }
};

__device__ __forceinline__ AttCtx att_ctx(const int* indices, const int* keys, const float* el, const float* er,
                                          BlockCounts bc, int dstCap, int bip, int heads, float slope, AttDrop drop) {
    AttCtx c = {indices, keys, el, er, bc, dstCap, bip, heads, slope, drop};
    return c;
}

extern "C" __global__ void __launch_bounds__(256, 4) edge_softmax(ATT_ARGS, float* coef) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    EsFwd f = {att_ctx(indices, keys, el, er, bc, dstCap, bip, heads, slope,
                       att_drop(dropout, thr, scale, seed, clock, stream)),
               coef};
    att_sweep(indptr, bc, dstCap, heads, f);
}

// EsDot adds Σ α g over a lane's positions into sg (g = dcoef after
// dropout, kept in g for the R kept positions).
template <int R>
struct EsDot {
    const AttCtx& c;
    const AttTask& t;
    u32 idx;
    const float* dcoef;
    double sg;
    float g[R];
    __device__ __forceinline__ float grad(int k) const {
        return att_apply(c.drop, dcoef[att_row(t.i, t.e0, k, c.dstCap) * c.heads + t.h], idx, k * c.heads + t.h);
    }
    __device__ __forceinline__ void operator()(int k, int j, float al, bool, int r) {
        float gk = 0.f;
        if (j >= 0) {
            gk = grad(k);
            sg += (double)al * (double)gk;
        }
        if (r >= 0) g[r] = gk;
    }
};

// EsGrad writes a position's logit gradient d = α (g - Σ α g), times
// slope where el + er <= 0 (into dt, or added into del), and adds it into
// sum.
template <int R>
struct EsGrad {
    const EsDot<R>& dot;  // sg reduced over the group
    double* dt;
    float* del;
    double sum;
    __device__ __forceinline__ void operator()(int k, int j, float al, bool pos, int r) {
        const AttCtx& c = dot.c;
        i64 at = att_row(dot.t.i, dot.t.e0, k, c.dstCap) * c.heads + dot.t.h;
        double d = 0.0;
        if (j >= 0) {
            float gk = r >= 0 ? dot.g[r] : dot.grad(k);
            d = (double)al * ((double)gk - dot.sg);
            if (!pos) d *= (double)c.slope;
        }
        if (dt)
            dt[at] = d;
        else if (j >= 0)
            atomicAdd(del + (i64)j * c.heads + dot.t.h, (float)d);
        sum += d;
    }
};

// EsBwd writes a task's der and its positions' gradients of el: added into
// del with atomics (dt null; del zeroed before) or kept per position in dt
// (F64 [dstCap + edgeCap, heads], 0 where invalid) for gat_del_gather;
// der = Σ d over the positions.
struct EsBwd {
    AttCtx c;
    const float* dcoef;
    float *del, *der;
    double* dt;
    template <int W, int R>
    __device__ __forceinline__ void run(const AttTask& t, int s) const {
        AttLane<R> a;
        att_softmax<W>(c, t, s, a);
        EsDot<R> dot = {c, t, att_key(c, t), dcoef, 0.0};
        att_each<W>(c, t, a, dot);
        dot.sg = grp_sum_d<W>(dot.sg);
        EsGrad<R> grad = {dot, dt, del, 0.0};
        att_each<W>(c, t, a, grad);
        double sum = grp_sum_d<W>(grad.sum);
        if (s == 0 && t.np > 0) der[(i64)t.i * c.heads + t.h] = (float)sum;
    }
};

extern "C" __global__ void __launch_bounds__(256, 4) edge_softmax_bwd(ATT_ARGS, const float* dcoef, float* del, float* der, double* dt) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    EsBwd f = {att_ctx(indices, keys, el, er, bc, dstCap, bip, heads, slope,
                       att_drop(dropout, thr, scale, seed, clock, stream)),
               dcoef, del, der, dt};
    att_sweep(indptr, bc, dstCap, heads, f);
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
