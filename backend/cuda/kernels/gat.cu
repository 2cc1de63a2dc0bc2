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
//   shapes that fit: up to 32 heads, 8 words per lane). Both take two
//   score vectors of the same x (a GAT layer's source and destination
//   scores: a over rows [:n] into out, a2 over rows [:n2] into out2, each
//   sum as if alone; n2 0, a null count of capacity 0, for one).
// head_dot_bwd(_v4): dx += dout x a element-wise (without add, dx = 0 +
//   dout x a: dx not read) and the partial sums of da per chunk of rows,
//   like bias_act_dropout_bwd, for two score vectors (a GAT layer's source
//   and destination scores) in one pass over x and dx;
//   column_sums (dense.cu) adds the chunks in a fixed order.
// edge_softmax(_bwd), gat_del_gather: see gat_softmax.cu.
// head_agg(_bwd), head_agg_gather: see gat_agg.cu.
#include "common.cuh"
#include "vec.cuh"
#include "gat.cuh"

extern "C" __global__ void head_dot(const float* x, const int* nP, int cap, const int* nP2, int cap2, int heads,
                                    int dim, const float* a, const float* a2, float* out, float* out2) {
    int n = live_count(nP, cap), n2 = live_count(nP2, cap2), lane = lane_id();
    i64 w = (i64)heads * dim;
    for (int i = gwarp(); i < max(n, n2); i += gwarps()) {
        const float* xr = x + (i64)i * w;
        for (int h = 0; h < heads; h++) {
            double s = 0.0, s2 = 0.0;
            for (int f = lane; f < dim; f += 32) {
                double v = (double)xr[h * dim + f];
                if (i < n) s += v * (double)a[h * dim + f];
                if (i < n2) s2 += v * (double)a2[h * dim + f];
            }
            s = warp_sum_d(s);
            s2 = warp_sum_d(s2);
            if (lane == 0 && i < n) out[(i64)i * heads + h] = (float)s;
            if (lane == 0 && i < n2) out2[(i64)i * heads + h] = (float)s2;
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
__device__ __forceinline__ void head_dot_grp(const V* x, int n, int n2, int heads, int dimV, int gl, const V* a,
                                             const V* a2, float* out, float* out2) {
    const int R = NQ * (int)sizeof(V) <= 32 ? 2 : 1;
    HeadLanes L = head_lanes(heads, dimV, gl);
    V av[NQ], av2[NQ];
#pragma unroll
    for (int k = 0; k < NQ; k++) {
        int c = L.col(k);
        av[k] = c >= 0 ? a[L.h * dimV + c] : V();
        av2[k] = c >= 0 && n2 > 0 ? a2[L.h * dimV + c] : V();
    }
    int G = gwarps(), nm = max(n, n2);
    for (int i0 = gwarp(); i0 < nm; i0 += R * G) {
        V xv[R][NQ];
#pragma unroll
        for (int r = 0; r < R; r++) {
            int i = i0 + r * G;
#pragma unroll
            for (int k = 0; k < NQ; k++) {
                int c = L.col(k);
                xv[r][k] = c >= 0 && i < nm ? x[(i64)i * L.wV + L.h * dimV + c] : V();
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            int i = i0 + r * G;
            double s = 0.0, s2 = 0.0;
#pragma unroll
            for (int k = 0; k < NQ; k++) s = vdot_d(xv[r][k], av[k], s);
            for (int o = (1 << gl) >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
            if (i < n && L.on && L.s == 0) out[(i64)i * heads + L.h] = (float)s;
            if (i >= n2) continue;  // no second score for this row (uniform over the warp)
#pragma unroll
            for (int k = 0; k < NQ; k++) s2 = vdot_d(xv[r][k], av2[k], s2);
            for (int o = (1 << gl) >> 1; o > 0; o >>= 1) s2 += __shfl_xor_sync(FULL_MASK, s2, o);
            if (i < n2 && L.on && L.s == 0) out2[(i64)i * heads + L.h] = (float)s2;
        }
    }
}

#define HD_GRP(V, NQ, SUF)                                                                                  \
    extern "C" __global__ void head_dot_##SUF(const V* x, const int* nP, int cap, const int* nP2, int cap2,   \
                                              int heads, int dimV, int gl, const V* a, const V* a2, float* out, \
                                              float* out2) {                                                 \
        head_dot_grp<V, NQ>(x, live_count(nP, cap), live_count(nP2, cap2), heads, dimV, gl, a, a2, out, out2); \
    }
HD_GRP(float4, 2, v4_2)
HD_GRP(float4, 4, v4_4)
HD_GRP(float4, 8, v4_8)
HD_GRP(float, 2, v1_2)
HD_GRP(float, 4, v1_4)
HD_GRP(float, 8, v1_8)

// head_dot_bwd, head_dot_bwd_v4(f): grid (ceil(wV/32), chunks), block (32, 8),
// wV = w words of V (floats, or float4 when w % 4 == 0, dim >= 4 and x, dx
// are 16-byte aligned, a quarter of the instructions per byte; with
// dim % 4 != 0 the flat form v4f, where a word's components lie in at most
// two heads, h and hl); thread (x, y)
// of block (bx, by) takes word 32*bx + x and rows r0 + y, r0 + y + 8, ...
// of chunk by, over rows [:n1] with (dout1, a1, partial1) and over rows
// [:n2] with (dout2, a2, partial2) of the same x and dx in one pass: dx =
// (dx + g1·a1) + g2·a2, each term where its rows reach (the loads of U rows
// go out before their stores: 8 floats, or 4 float4 words, which keeps a
// thread's registers low enough for three blocks an SM; sums in row order,
// per column, then over y in order: both widths write the same bits);
// partial1 and partial2 are [chunks, w]; chunks over max(n1, n2) rows.
template <typename V, int U, bool FLAT>
__device__ __forceinline__ void head_dot_bwd_t(const V* x, const float* dout1, const float* dout2, int n1, int n2,
                                               int heads, int dim, const float* a1, const float* a2, V* dx,
                                               int add, float* partial1, float* partial2, int chunkRows) {
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
        // The heads of the word's first and last components: two where a
        // head's width is not a whole number of words (a flat row).
        int h = c * NC / dim, hl = FLAT ? (c * NC + NC - 1) / dim : h;
        V av1, av2;
#pragma unroll
        for (int q = 0; q < NC; q++) vset(av1, q, a1[c * NC + q]), vset(av2, q, a2[c * NC + q]);
        for (int rb = r0 + threadIdx.y; rb < r1; rb += 8 * U) {
            float g1[U], g2[U], g1l[U], g2l[U];  // (g1l, g2l: head hl's)
            V xv[U], dv[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                int r = rb + 8 * u;
                i64 idx = (i64)r * wV + c;
                g1[u] = r < m1 ? dout1[(i64)r * heads + h] : 0.f;
                g2[u] = r < m2 ? dout2[(i64)r * heads + h] : 0.f;
                g1l[u] = r < m1 && hl != h ? dout1[(i64)r * heads + hl] : g1[u];
                g2l[u] = r < m2 && hl != h ? dout2[(i64)r * heads + hl] : g2[u];
                xv[u] = r < r1 ? x[idx] : V();
                dv[u] = add && r < r1 ? dx[idx] : V();
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                int r = rb + 8 * u;
                if (r >= r1) break;
                V v = dv[u];
#pragma unroll
                for (int q = 0; q < NC; q++) {
                    float f = vcomp(v, q), xq = vcomp(xv[u], q);
                    bool last = FLAT && (c * NC + q) / dim != h;
                    float a1q = last ? g1l[u] : g1[u], a2q = last ? g2l[u] : g2[u];
                    if (r < m1) {
                        f = __fadd_rn(f, __fmul_rn(a1q, vcomp(av1, q)));
                        s1[q] += (double)a1q * (double)xq;
                    }
                    if (r < m2) {
                        f = __fadd_rn(f, __fmul_rn(a2q, vcomp(av2, q)));
                        s2[q] += (double)a2q * (double)xq;
                    }
                    vset(v, q, f);
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
                                         float* dx, int add, float* partial1, float* partial2, int chunkRows) {
    head_dot_bwd_t<float, 8, false>(x, dout1, dout2, live_count(n1P, cap1), live_count(n2P, cap2), heads, dim, a1, a2, dx,
                             add, partial1, partial2, chunkRows);
}
extern "C" __global__ void head_dot_bwd_v4(const float4* x, const float* dout1, const float* dout2, HD_BWD_ARGS,
                                            float4* dx, int add, float* partial1, float* partial2, int chunkRows) {
    head_dot_bwd_t<float4, 4, false>(x, dout1, dout2, live_count(n1P, cap1), live_count(n2P, cap2), heads, dim, a1, a2,
                                     dx, add, partial1, partial2, chunkRows);
}
extern "C" __global__ void head_dot_bwd_v4f(const float4* x, const float* dout1, const float* dout2, HD_BWD_ARGS,
                                             float4* dx, int add, float* partial1, float* partial2, int chunkRows) {
    head_dot_bwd_t<float4, 4, true>(x, dout1, dout2, live_count(n1P, cap1), live_count(n2P, cap2), heads, dim, a1, a2,
                                    dx, add, partial1, partial2, chunkRows);
}
