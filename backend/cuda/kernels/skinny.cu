// skinny.cu: float32 products with a narrow output (out <= 8 columns)
// without cuBLAS, for Linear and LinearBackwardWeight (the twins of
// backend/cpu/linear.go for those shapes): a GAT layer's scores x·u and
// their weights' gradients. Both read the live row count on the device and
// touch only live rows (no padding work), and both add in an order that
// the widths alone fix (not the capacity, the grid or x's alignment), so
// eager and replayed runs write the same bits.
//
// x is float32 or (the _bf16 kernels, SharedAttention's ScoreProducts)
// bfloat16, widened exactly as read, so that a bfloat16 x gives the bits
// of its float32 widening. Columns go in words of four (word j: columns
// 4j .. 4j+3), read as one vector when VEC (in % 4 == 0 and x aligned to
// the word: 16 bytes, 8 for bfloat16), else one value at a time (columns
// past in read as 0). P is out rounded up to a power of two (1, 2,
// 4, 8): outputs past out are computed as 0 and not written.
//
// skinny_fwd_p{P}(_v1): y[i, :out] = x[i, :]·w (+ y[i, :out] when acc) for
//   rows i < n, and, given w2 (ScoreProducts), y2[i, :out] = x[i, :]·w2 for
//   rows i < n2 from the same loads. Each block keeps w (then w2) in shared
//   memory as [4·W][P] (W = ceil(in/4) words; row 4j+q holds w[4j+q, :],
//   read by every thread at once). A thread takes a row (the grid strides
//   over them) and per output a float32 FMA chain over the row's columns in
//   order: no sums across lanes, few registers, and eight of a row's words
//   loaded ahead. A warp's lanes read 32 rows apart; a row's words come
//   from the sectors its first reads brought into L1.
// skinny_wgrad_p{P}(_v1): partial[b, k*out + o] = sum over rows i of chunk b
//   (rows [b*chunkRows, (b+1)*chunkRows) below n) of x[i, k]·dy[i, o]. Grid
//   (chunks, ceil(W/32)), block (32, 8): thread (x, y) of block (bx, by)
//   takes word 32*by + x and rows r0 + y, r0 + y + 8, ... of chunk bx (SK_U
//   rows' loads before their FMAs), per output a float32 FMA chain in row
//   order; the 8 chains of a word are added in order of y. column_sums
//   (dense.cu) adds the live chunks in a fixed order in float64. Blocks of
//   blockIdx.z 1 take a second gradient of the same x (dy2, n2, partial2:
//   ScoreProductsBackward), so that two take one launch.
#include "bf16.cuh"
#include "vec.cuh"

#define SK_U 4  // rows a weight-gradient thread loads before it adds them

// SkWord<E>::type is the vector of four elements E: float4 for float32,
// uint2 for bfloat16 (unsigned short).
template <typename E>
struct SkWord {
    typedef float4 type;
};
template <>
struct SkWord<unsigned short> {
    typedef uint2 type;
};

// sk_word loads word j of the row at x + base (in columns), widened: one
// vector when VEC, else four values, those at columns >= in as 0.
template <bool VEC, typename E>
__device__ __forceinline__ float4 sk_word(const E* x, i64 base, int in, int j) {
    if (VEC) return to_float(*(const typename SkWord<E>::type*)(x + base + 4 * j));
    int c = 4 * j;
    return make_float4(c < in ? to_float(x[base + c]) : 0.f, c + 1 < in ? to_float(x[base + c + 1]) : 0.f,
                       c + 2 < in ? to_float(x[base + c + 2]) : 0.f, c + 3 < in ? to_float(x[base + c + 3]) : 0.f);
}

// sk_chains adds row base's words into the P chains s (w's copy ws) and,
// with TWO, into the P chains s2 (w2's copy ws2), one FMA chain per output
// in column order: the bits of s do not depend on TWO.
template <int P, bool VEC, bool TWO, typename E>
__device__ __forceinline__ void sk_chains(const E* x, i64 base, int in, int W, const float* ws, const float* ws2,
                                          float (&s)[P], float (&s2)[P]) {
#pragma unroll 8
    for (int j = 0; j < W; j++) {
        float4 xv = sk_word<VEC>(x, base, in, j);
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const float* wr = ws + (4 * j + q) * P;
#pragma unroll
            for (int o = 0; o < P; o++) s[o] = fmaf(vcomp(xv, q), wr[o], s[o]);
            if (TWO) {
                const float* wr2 = ws2 + (4 * j + q) * P;
#pragma unroll
                for (int o = 0; o < P; o++) s2[o] = fmaf(vcomp(xv, q), wr2[o], s2[o]);
            }
        }
    }
}

// sk_copy_w copies w [in, out] into ws as [4·W][P] (zeros past in and out).
template <int P>
__device__ __forceinline__ void sk_copy_w(const float* w, int in, int out, int W, float* ws) {
    for (int t = threadIdx.x; t < 4 * P * W; t += blockDim.x) {
        int o = t % P, k = t / P;  // k = 4j + q
        ws[t] = k < in && o < out ? w[(i64)k * out + o] : 0.f;
    }
}

template <int P, bool VEC, typename E>
__device__ __forceinline__ void skinny_fwd_t(const E* x, const int* nP, int cap, const float* w, int in, int out,
                                             float* y, int acc, const int* nP2, int cap2, const float* w2,
                                             float* y2) {
    extern __shared__ float4 wv4[];  // 16-byte aligned: a row of P >= 4 floats reads as vectors
    float* ws = (float*)wv4;         // [4·W][P]: row 4j+q is w[4j+q, :]; then w2's copy, when given
    int W = (in + 3) >> 2;
    float* ws2 = ws + 4 * P * W;
    sk_copy_w<P>(w, in, out, W, ws);
    if (w2) sk_copy_w<P>(w2, in, out, W, ws2);
    __syncthreads();
    int n = live_count(nP, cap), n2 = w2 ? live_count(nP2, cap2) : 0;
    for (i64 r = gtid(); r < max(n, n2); r += gthreads()) {
        float s[P], s2[P];
#pragma unroll
        for (int o = 0; o < P; o++) s[o] = s2[o] = 0.f;
        if (r < n2)
            sk_chains<P, VEC, true>(x, r * in, in, W, ws, ws2, s, s2);
        else
            sk_chains<P, VEC, false>(x, r * in, in, W, ws, ws2, s, s2);
#pragma unroll
        for (int o = 0; o < P; o++) {
            if (o >= out) break;
            i64 idx = r * out + o;
            if (r < n) y[idx] = acc ? y[idx] + s[o] : s[o];
            if (r < n2) y2[idx] = s2[o];
        }
    }
}

template <int P, bool VEC, typename E>
__device__ __forceinline__ void skinny_wgrad_t(const E* x, const float* dy, const int* nP, int cap, int in,
                                               int out, float* partial, int chunkRows, const float* dy2,
                                               const int* nP2, int cap2, float* partial2) {
    __shared__ float red[8][4 * P][33];
    if (blockIdx.z == 1) dy = dy2, nP = nP2, cap = cap2, partial = partial2;
    int n = live_count(nP, cap);
    i64 r0 = (i64)blockIdx.x * chunkRows;
    if (r0 >= n) return;  // the whole block: no live row in this chunk
    i64 r1 = min((i64)n, r0 + chunkRows);
    int W = (in + 3) >> 2, j = blockIdx.y * 32 + threadIdx.x;
    float s[4 * P];  // s[q*P + o]: column 4j+q, output o
#pragma unroll
    for (int v = 0; v < 4 * P; v++) s[v] = 0.f;
    if (j < W) {
        for (i64 rb = r0 + threadIdx.y; rb < r1; rb += 8 * SK_U) {
            float4 xv[SK_U];
            float g[SK_U][P];
#pragma unroll
            for (int u = 0; u < SK_U; u++) {
                i64 r = rb + 8 * u;
                bool live = r < r1;
                xv[u] = live ? sk_word<VEC>(x, r * in, in, j) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                for (int o = 0; o < P; o++) g[u][o] = live && o < out ? dy[r * out + o] : 0.f;
            }
#pragma unroll
            for (int u = 0; u < SK_U; u++) {
                if (rb + 8 * u >= r1) break;
#pragma unroll
                for (int q = 0; q < 4; q++) {
#pragma unroll
                    for (int o = 0; o < P; o++) s[q * P + o] = fmaf(vcomp(xv[u], q), g[u][o], s[q * P + o]);
                }
            }
        }
    }
#pragma unroll
    for (int v = 0; v < 4 * P; v++) red[threadIdx.y][v][threadIdx.x] = s[v];
    __syncthreads();
    for (int v = threadIdx.y; v < 4 * P; v += 8) {
        int k = 4 * j + v / P, o = v % P;
        if (j < W && k < in && o < out) {
            float t = 0.f;
#pragma unroll
            for (int yy = 0; yy < 8; yy++) t += red[yy][v][threadIdx.x];
            partial[(i64)blockIdx.x * in * out + (i64)k * out + o] = t;
        }
    }
}

// The kernels: P = 1, 2, 4, 8; float32 x in vectors and (_v1) one at a
// time, and bfloat16 x (_bf16) likewise. The weight gradient's bound of 64
// registers (4 blocks a multiprocessor, where it took 71 and 3) made it
// 22.6 -> 17.1 us on products-sim's bottom GAT layer (H200).
#define SK_FWD_ARGS                                                                                     \
    const int *nP, int cap, const float *w, int in, int out, float *y, int acc, const int *nP2, int cap2, \
        const float *w2, float *y2
#define SK_WGRAD_ARGS                                                                                          \
    const float *dy, const int *nP, int cap, int in, int out, float *partial, int chunkRows, const float *dy2, \
        const int *nP2, int cap2, float *partial2
#define SK_FWD(P, VEC) skinny_fwd_t<P, VEC>(x, nP, cap, w, in, out, y, acc, nP2, cap2, w2, y2)
#define SK_WGRAD(P, VEC) \
    skinny_wgrad_t<P, VEC>(x, dy, nP, cap, in, out, partial, chunkRows, dy2, nP2, cap2, partial2)
#define SK_KERNELS(P)                                                                                                          \
    extern "C" __global__ void skinny_fwd_p##P(const float* x, SK_FWD_ARGS) { SK_FWD(P, true); }                               \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P(const float* x, SK_WGRAD_ARGS) {                    \
        SK_WGRAD(P, true);                                                                                                     \
    }                                                                                                                          \
    extern "C" __global__ void skinny_fwd_p##P##_v1(const float* x, SK_FWD_ARGS) { SK_FWD(P, false); }                         \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P##_v1(const float* x, SK_WGRAD_ARGS) {               \
        SK_WGRAD(P, false);                                                                                                    \
    }                                                                                                                          \
    extern "C" __global__ void skinny_fwd_p##P##_bf16(const unsigned short* x, SK_FWD_ARGS) { SK_FWD(P, true); }               \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P##_bf16(const unsigned short* x, SK_WGRAD_ARGS) {    \
        SK_WGRAD(P, true);                                                                                                     \
    }                                                                                                                          \
    extern "C" __global__ void skinny_fwd_p##P##_bf16_v1(const unsigned short* x, SK_FWD_ARGS) { SK_FWD(P, false); }           \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P##_bf16_v1(const unsigned short* x, SK_WGRAD_ARGS) { \
        SK_WGRAD(P, false);                                                                                                    \
    }

SK_KERNELS(1)
SK_KERNELS(2)
SK_KERNELS(4)
SK_KERNELS(8)
