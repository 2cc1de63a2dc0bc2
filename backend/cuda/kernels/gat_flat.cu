// gat_flat.cu: the flat form of the grouped attention kernels, for heads
// whose width is not a whole number of float4 words while a row's is
// (heads·dim % 4 == 0, dim >= 4; a top layer's classes averaged over four
// heads: 4 × 47). A row's float4 words are dealt to the warp's lanes in
// turn (lane l takes words l, l + 32, ..., at most NQ), and component q of
// word c belongs to head (4c + q)/dim: a word's components lie in at most
// two heads (FlatWord). Where the grouped kernels would take floats, these
// take float4 words, a quarter of the loads; the sums are the same
// operations in the same order as the grouped kernels' per column (the
// forward's float32 sums, the mean over heads in head order), and per head
// a warp-wide butterfly over the lanes' float64 partial sums that
// halves the heads a lane keeps at each of its first steps
// (flat_heads_sum; the scores, the coefficient gradients).
//
// head_dot_flat_{NQ}: HeadDots, a warp a row.
// head_agg_flat_{NQ}: HeadAggregate, a warp a destination (positions
//   loaded HA_U at a time, the next destination's list ahead); with mean
//   the warp's sums go through shared memory to add the heads.
// head_agg_bwd_flat_{NQ}: HeadAggregateBackward, gridDim.y warps a
//   destination, each a slice of its positions (PosSlice), dx through
//   16-byte float atomics.
#include "common.cuh"
#include "vec.cuh"
#include "block.cuh"
#include "gat.cuh"
#include "gat_agg.cuh"

// FLAT_HEADS is the most heads the flat kernels take (a lane's partial
// sums, one a head, live in registers).
#define FLAT_HEADS 4  // flat_heads_sum halves four sums twice

// FlatWord is word c of a row: the head h of its first component, and
// split, its first component in head h + 1 (4 when none is).
struct FlatWord {
    int c, h, split;
    __device__ __forceinline__ bool hi(int q) const { return q >= split; }
};

__device__ __forceinline__ FlatWord flat_word(int c, int dim, int heads) {
    FlatWord W;
    int f0 = 4 * c;
    W.c = c;
    W.h = min(f0 / dim, heads - 1);
    W.split = min(4, (W.h + 1) * dim - f0);
    return W;
}

// flat_weights is the word's components' weights: wl for head h, wh for h + 1.
__device__ __forceinline__ float4 flat_weights(const FlatWord& W, float wl, float wh) {
    return make_float4(W.hi(0) ? wh : wl, W.hi(1) ? wh : wl, W.hi(2) ? wh : wl, W.hi(3) ? wh : wl);
}

// flat_dots adds the word's products d·x in float64, component order, to
// the lane's partial sums of its two heads.
__device__ __forceinline__ void flat_dots(const FlatWord& W, float4 d, float4 x, double (&s)[FLAT_HEADS]) {
    double lo = 0.0, hi = 0.0;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        double p = (double)vcomp(d, q) * (double)vcomp(x, q);
        if (W.hi(q)) hi += p;
        else lo += p;
    }
    // Every sum takes an add (of zero where the word has no component of its
    // head: the same bits), which keeps s in registers.
#pragma unroll
    for (int h = 0; h < FLAT_HEADS; h++) s[h] += h == W.h ? lo : h == W.h + 1 ? hi : 0.0;
}

// flat_heads_sum adds the lanes' partial sums s (one a head) over the
// warp: a butterfly that halves the sums a lane keeps at offsets 16 and 8
// (the lane with the offset's bit set keeps the upper half), then adds
// over offsets 4, 2 and 1; lane l ends with head l >> 3's sum, the same
// bits in each of its eight lanes.
template <int M>
__device__ __forceinline__ void flat_halve(double (&s)[FLAT_HEADS], int o) {
    bool up = lane_id() & o;
#pragma unroll
    for (int k = 0; k < M / 2; k++) {
        double send = up ? s[k] : s[k + M / 2];
        double keep = up ? s[k + M / 2] : s[k];
        s[k] = keep + __shfl_xor_sync(FULL_MASK, send, o);
    }
}

__device__ __forceinline__ double flat_heads_sum(double (&s)[FLAT_HEADS]) {
    flat_halve<4>(s, 16);
    flat_halve<2>(s, 8);
    double v = s[0];
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

template <int NQ>
__device__ __forceinline__ void head_dot_flat_t(const float4* x, int n, int n2, int heads, int dim, int wV,
                                                const float4* a, const float4* a2, float* out, float* out2) {
    int lane = lane_id(), nm = max(n, n2);
    FlatWord W[NQ];
    float4 av[NQ], av2[NQ];
#pragma unroll
    for (int k = 0; k < NQ; k++) {
        int c = lane + 32 * k;
        W[k] = flat_word(c, dim, heads);
        av[k] = c < wV ? a[c] : float4();
        av2[k] = c < wV && n2 > 0 ? a2[c] : float4();
    }
    for (int i = gwarp(); i < nm; i += gwarps()) {
        float4 xv[NQ];
#pragma unroll
        for (int k = 0; k < NQ; k++) xv[k] = W[k].c < wV ? x[(i64)i * wV + W[k].c] : float4();
        double s[FLAT_HEADS], s2[FLAT_HEADS];
#pragma unroll
        for (int h = 0; h < FLAT_HEADS; h++) s[h] = s2[h] = 0.0;
#pragma unroll
        for (int k = 0; k < NQ; k++) {
            flat_dots(W[k], xv[k], av[k], s);
            if (i < n2) flat_dots(W[k], xv[k], av2[k], s2);
        }
        int h = lane >> 3;  // the head whose sums the lane ends with
        bool w = (lane & 7) == 0 && h < heads;
        double t = flat_heads_sum(s);
        if (i < n && w) out[(i64)i * heads + h] = (float)t;
        if (i >= n2) continue;  // uniform over the warp
        t = flat_heads_sum(s2);
        if (w) out2[(i64)i * heads + h] = (float)t;
    }
}

// HD_FLAT declares head_dot_flat_NQ with launch bounds B: three blocks of
// 256 an SM for the 2-word kernel (86 registers unbounded, 78 bounded; a
// top layer's rows are a few waves of warps).
#define HD_FLAT(B, NQ)                                                                                 \
    extern "C" __global__ void B head_dot_flat_##NQ(const float4* x, const int* nP, int cap, const int* nP2, \
                                                    int cap2, int heads, int dim, int wV, const float4* a, \
                                                    const float4* a2, float* out, float* out2) {           \
        head_dot_flat_t<NQ>(x, live_count(nP, cap), live_count(nP2, cap2), heads, dim, wV, a, a2, out, out2); \
    }
HD_FLAT(__launch_bounds__(256, 3), 2)
HD_FLAT(, 4)

// flat_coef is the lane's coefficient of position row: coef[row, lane]
// for lanes below heads, which the lanes then shuffle to their words.
__device__ __forceinline__ float flat_coef(const float* coef, i64 row, int heads, bool live) {
    int lane = lane_id();
    return live && lane < heads ? coef[row * heads + lane] : 0.f;
}

// flat_word_weights is the word's weights from the lanes' coefficients cl.
__device__ __forceinline__ float4 flat_word_weights(const FlatWord& W, float cl, int heads) {
    float wl = __shfl_sync(FULL_MASK, cl, W.h);
    float wh = __shfl_sync(FULL_MASK, cl, min(W.h + 1, heads - 1));
    return flat_weights(W, wl, wh);
}

// flat_load takes positions u0.. of the chunk at pb (cnt live) of slice
// ps of destination i: sources, the lanes' coefficients (withCoef) and
// the lanes' words of each source row (withX), every load issued first.
template <int NQ, int U>
__device__ __forceinline__ void flat_load(int jl, int u0, int cnt, int i, int e0, int pb, PosSlice ps, int dstCap,
                                          int heads, int wV, const FlatWord (&W)[NQ], bool withCoef, bool withX,
                                          const float* coef, const float4* x, int (&jj)[U], float (&cl)[U],
                                          float4 (&xv)[U][NQ]) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        jj[u] = __shfl_sync(FULL_MASK, jl, (u0 + u) & 31);
        if (u0 + u >= cnt) jj[u] = -1;
        cl[u] = flat_coef(coef, att_row(i, e0, ps.at(pb + u0 + u), dstCap), heads, withCoef && jj[u] >= 0);
#pragma unroll
        for (int k = 0; k < NQ; k++)
            xv[u][k] = withX && jj[u] >= 0 && W[k].c < wV ? x[(i64)jj[u] * wV + W[k].c] : float4();
    }
}

template <int NQ>
__device__ __forceinline__ void head_agg_flat_t(const int* indptr, const int* indices, BlockCounts bc, int dstCap,
                                                int bip, int heads, int dim, int wV, int mean, int accumulate,
                                                const float* coef, const float4* x, float* out) {
    const int U = HA_U(float4, NQ);
    const PosSlice all = {0, 1};
    __shared__ float red[8][NQ * 128];  // a warp's sums, for the mean (blocks of 256)
    float* rw = red[threadIdx.x >> 5];
    int lane = lane_id(), G = gwarps(), p0, p1;
    float invH = 1.0f / (float)heads;
    FlatWord W[NQ];
#pragma unroll
    for (int k = 0; k < NQ; k++) W[k] = flat_word(lane + 32 * k, dim, heads);
    HaDest cur = ha_first(indptr, indices, bc, bip, all);
    for (int i = gwarp(); i < bc.n; i += G) {
        int e0 = cur.e0, np = cur.np;
        ha_ptr(indptr, bc, i + G, &p0, &p1);
        float4 acc[NQ];
#pragma unroll
        for (int k = 0; k < NQ; k++) acc[k] = float4();
        for (int pb = 0; pb < np; pb += 32) {
            int jl = pb == 0 ? cur.jl : att_sources(indices, i, e0, pb, np, bc.ns, bip);
            int cnt = min(32, np - pb);
            for (int u0 = 0; u0 < cnt; u0 += U) {
                int jj[U];
                float cl[U];
                float4 xv[U][NQ];
                flat_load<NQ, U>(jl, u0, cnt, i, e0, pb, all, dstCap, heads, wV, W, true, true, coef, x, jj, cl, xv);
                if (pb == 0 && u0 == 0) cur = ha_dest(indices, bc, bip, i + G, p0, p1, all);  // the next one
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (jj[u] < 0) continue;  // uniform over the warp
                    bool self = pb + u0 + u == 0;
#pragma unroll
                    for (int k = 0; k < NQ; k++) {
                        float4 w = flat_word_weights(W[k], cl[u], heads);
                        acc[k] = self ? vmul_rn(w, xv[u][k]) : vfma(w, xv[u][k], acc[k]);
                    }
                }
            }
        }
        if (!mean) {
#pragma unroll
            for (int k = 0; k < NQ; k++) {
                if (W[k].c >= wV) continue;
                float4* o = (float4*)out + (i64)i * wV + W[k].c;
                *o = accumulate ? vadd_rn(*o, acc[k]) : acc[k];
            }
            continue;
        }
#pragma unroll
        for (int k = 0; k < NQ; k++)
            if (W[k].c < wV) ((float4*)rw)[W[k].c] = acc[k];
        __syncwarp();
        for (int f = lane; f < dim; f += 32) {
            float tot = rw[f];
            for (int h = 1; h < heads; h++) tot = __fadd_rn(tot, rw[h * dim + f]);
            float v = __fmul_rn(invH, tot);
            float* o = out + (i64)i * dim + f;
            *o = accumulate ? __fadd_rn(*o, v) : v;
        }
        __syncwarp();
    }
}

template <int NQ>
__device__ __forceinline__ void head_agg_bwd_flat_t(const int* indptr, const int* indices, BlockCounts bc,
                                                    int dstCap, int bip, int heads, int dim, int wV, int mean,
                                                    const float* coef, const float4* x, const float* dout,
                                                    float* dcoef, float4* dx) {
    const int U = HA_U(float4, NQ);
    const PosSlice ps = {(int)blockIdx.y, (int)gridDim.y};
    int lane = lane_id(), G = gwarps(), p0, p1;
    float invH = 1.0f / (float)heads;
    FlatWord W[NQ];
#pragma unroll
    for (int k = 0; k < NQ; k++) W[k] = flat_word(lane + 32 * k, dim, heads);
    HaDest cur = ha_first(indptr, indices, bc, bip, ps);
    for (int i = gwarp(); i < bc.n; i += G) {
        int e0 = cur.e0, np = cur.np, nm = ps.count(np);
        ha_ptr(indptr, bc, i + G, &p0, &p1);
        if (nm == 0) {  // no position of this slice
            cur = ha_dest(indices, bc, bip, i + G, p0, p1, ps);
            continue;
        }
        float4 d[NQ];
#pragma unroll
        for (int k = 0; k < NQ; k++) {
            d[k] = float4();
            if (W[k].c >= wV) continue;
            if (!mean) {
                d[k] = ((const float4*)dout)[(i64)i * wV + W[k].c];
                continue;
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int h = W[k].h + (W[k].hi(q) ? 1 : 0);
                vset(d[k], q, dout[(i64)i * dim + 4 * W[k].c + q - h * dim]);
            }
        }
        for (int pb = 0; pb < nm; pb += 32) {
            int jl = pb == 0 ? cur.jl : att_sources(indices, i, e0, pb, np, bc.ns, bip, ps.c, ps.p);
            int cnt = min(32, nm - pb);
            for (int u0 = 0; u0 < cnt; u0 += U) {
                int jj[U];
                float cl[U];
                float4 xv[U][NQ];
                flat_load<NQ, U>(jl, u0, cnt, i, e0, pb, ps, dstCap, heads, wV, W, dx != 0, dcoef != 0, coef, x, jj,
                                 cl, xv);
                if (pb == 0 && u0 == 0) cur = ha_dest(indices, bc, bip, i + G, p0, p1, ps);  // the next one
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (u0 + u >= cnt) break;
                    if (dcoef) {
                        double s[FLAT_HEADS];
#pragma unroll
                        for (int h = 0; h < FLAT_HEADS; h++) s[h] = 0.0;
#pragma unroll
                        for (int k = 0; k < NQ; k++) flat_dots(W[k], d[k], xv[u][k], s);
                        i64 row = att_row(i, e0, ps.at(pb + u0 + u), dstCap);
                        double t = flat_heads_sum(s);
                        if (mean) t /= (double)heads;
                        int h = lane >> 3;  // the head whose sum the lane ends with
                        if ((lane & 7) == 0 && h < heads) dcoef[row * heads + h] = (float)t;
                    }
                    if (!dx || jj[u] < 0) continue;  // uniform over the warp
#pragma unroll
                    for (int k = 0; k < NQ; k++) {
                        float4 w = flat_word_weights(W[k], mean ? __fmul_rn(cl[u], invH) : cl[u], heads);
                        if (W[k].c < wV) vatomic_add4(dx + (i64)jj[u] * wV + W[k].c, w, d[k]);
                    }
                }
            }
        }
    }
}

// HA_FLAT declares the pair for NQ words a lane, the backward with launch
// bounds BB: two blocks of 256 an SM for 2 words (143 registers unbounded,
// 126 bounded); the 4-word one would spill so.
#define HA_FLAT(BB, NQ)                                                                                      \
    extern "C" __global__ void __launch_bounds__(256) head_agg_flat_##NQ(                                \
        HA_ARGS, int wV, int accumulate, const float* coef, const float4* x, float* out) {               \
        head_agg_flat_t<NQ>(indptr, indices, block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap), \
                            dstCap, bip, heads, dim, wV, mean, accumulate, coef, x, out);                \
    }                                                                                                    \
    extern "C" __global__ void BB head_agg_bwd_flat_##NQ(                                                \
        HA_ARGS, int wV, const float* coef, const float4* x, const float* dout, float* dcoef, float4* dx) { \
        head_agg_bwd_flat_t<NQ>(indptr, indices, block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap), \
                                dstCap, bip, heads, dim, wV, mean, coef, x, dout, dcoef, dx);            \
    }
HA_FLAT(__launch_bounds__(256, 2), 2)
HA_FLAT(, 4)
