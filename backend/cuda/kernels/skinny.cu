// skinny.cu: float32 products with a narrow output (out <= 8 columns)
// without cuBLAS, for Linear and LinearBackwardWeight (the twins of
// backend/cpu/linear.go for those shapes): a GAT layer's scores x·u and
// their weights' gradients. Both read the live row count on the device and
// touch only live rows (no padding work), and both add in an order that
// the widths alone fix (not the capacity, the grid or x's alignment), so
// eager and replayed runs write the same bits.
//
// x is float32 or (the _bf16 kernels, SharedAttention's ScoreProduct)
// bfloat16, widened exactly as read, so that a bfloat16 x gives the bits
// of its float32 widening. Columns go in words of four (word j: columns
// 4j .. 4j+3), read as one vector when VEC (in % 4 == 0 and x aligned to
// the word: 16 bytes, 8 for bfloat16), else one value at a time (columns
// past in read as 0). P is out rounded up to a power of two (1, 2,
// 4, 8): outputs past out are computed as 0 and not written.
//
// skinny_fwd_p{P}(_v1): y[i, :out] = x[i, :]·w (+ y[i, :out] when acc) for
//   rows i < n. Each block keeps w in shared memory as [4][P][W] (W =
//   ceil(in/4) words; q, o, j: w[4j+q, o], so lanes read consecutive words).
//   A warp takes R = min(8, 32/P) consecutive rows at a time and lane l the
//   words l, l+32, ...: per row and output a float32 FMA chain over the
//   lane's words in order and each word's columns in order, then a
//   reduce-scatter over the warp (SkFold) leaves each (row, output) sum in
//   a group of 32/(R·P) lanes, whose first writes it.
// skinny_wgrad_p{P}(_v1): partial[b, k*out + o] = sum over rows i of chunk b
//   (rows [b*chunkRows, (b+1)*chunkRows) below n) of x[i, k]·dy[i, o]. Grid
//   (chunks, ceil(W/32)), block (32, 8): thread (x, y) of block (bx, by)
//   takes word 32*by + x and rows r0 + y, r0 + y + 8, ... of chunk bx (SK_U
//   rows' loads before their FMAs), per output a float32 FMA chain in row
//   order; the 8 chains of a word are added in order of y. column_sums
//   (dense.cu) adds the live chunks in a fixed order in float64.
#include "bf16.cuh"

#define SK_U 4  // rows a weight-gradient thread loads before it adds them

// sk_comp is component q (0..3) of a word.
__device__ __forceinline__ float sk_comp(float4 v, int q) { return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w; }

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

// SkFold<V, 16>::run: the warp's sums of s[0..V) (V a power of two, at
// most 32) by a reduce-scatter: at xor distance O = 16, 8, ..., 1 a lane
// whose bit O is set keeps the upper half of its C values, sends the lower
// half to its partner and adds the partner's upper half (then, with one
// value left, a plain butterfly). Afterwards lane l holds in s[0] the sum
// of value l / (32/V); every lane reaches every shuffle. A template
// recursion, so that every index is a constant and s stays in registers.
template <int C, int O>
struct SkFold {
    static __device__ __forceinline__ void run(float* s, int lane) {
        const int h = C / 2;
        bool up = (lane & O) != 0;
#pragma unroll
        for (int k = 0; k < h; k++) {
            float send = up ? s[k] : s[k + h];
            float keep = up ? s[k + h] : s[k];
            s[k] = keep + __shfl_xor_sync(FULL_MASK, send, O);
        }
        SkFold<h, O / 2>::run(s, lane);
    }
};
template <int O>
struct SkFold<1, O> {
    static __device__ __forceinline__ void run(float* s, int lane) {
        s[0] += __shfl_xor_sync(FULL_MASK, s[0], O);
        SkFold<1, O / 2>::run(s, lane);
    }
};
template <>
struct SkFold<1, 0> {
    static __device__ __forceinline__ void run(float*, int) {}
};

template <int P, bool VEC, typename E>
__device__ __forceinline__ void skinny_fwd_t(const E* x, const int* nP, int cap, const float* w, int in, int out,
                                             float* y, int acc) {
    const int R = P >= 4 ? 32 / P : 8, V = R * P, G = 32 / V;
    extern __shared__ float ws[];  // [4][P][W]
    int W = (in + 3) >> 2;
    for (int t = threadIdx.x; t < 4 * P * W; t += blockDim.x) {
        int j = t % W, o = (t / W) % P, k = 4 * j + t / (W * P);
        ws[t] = k < in && o < out ? w[(i64)k * out + o] : 0.f;
    }
    __syncthreads();
    int n = live_count(nP, cap), lane = lane_id();
    i64 stride = (i64)gwarps() * R;
    for (i64 r0 = (i64)gwarp() * R; r0 < n; r0 += stride) {  // the warp's rows r0 .. r0+R-1
        float s[V];
#pragma unroll
        for (int v = 0; v < V; v++) s[v] = 0.f;
        for (int j = lane; j < W; j += 32) {
            float4 xv[R];
#pragma unroll
            for (int r = 0; r < R; r++)
                xv[r] = r0 + r < n ? sk_word<VEC>(x, (r0 + r) * in, in, j) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int q = 0; q < 4; q++) {
#pragma unroll
                for (int o = 0; o < P; o++) {
                    float wv = ws[(q * P + o) * W + j];
#pragma unroll
                    for (int r = 0; r < R; r++) s[r * P + o] = fmaf(sk_comp(xv[r], q), wv, s[r * P + o]);
                }
            }
        }
        SkFold<V, 16>::run(s, lane);
        int slot = lane / G, o = slot % P;
        i64 row = r0 + slot / P;
        if (lane % G == 0 && row < n && o < out) {
            i64 idx = row * out + o;
            y[idx] = acc ? y[idx] + s[0] : s[0];
        }
    }
}

template <int P, bool VEC, typename E>
__device__ __forceinline__ void skinny_wgrad_t(const E* x, const float* dy, const int* nP, int cap, int in,
                                               int out, float* partial, int chunkRows) {
    __shared__ float red[8][4 * P][33];
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
                    for (int o = 0; o < P; o++) s[q * P + o] = fmaf(sk_comp(xv[u], q), g[u][o], s[q * P + o]);
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
// 22.6 -> 17.1 us on products-sim's bottom GAT layer (H200); the forward
// kernel's was slower (20.5 -> 35.1 us at 64, 22.3 at 80 of its 127).
#define SK_FWD_ARGS const int *nP, int cap, const float *w, int in, int out, float *y, int acc
#define SK_WGRAD_ARGS const float *dy, const int *nP, int cap, int in, int out, float *partial, int chunkRows
#define SK_KERNELS(P)                                                                                                \
    extern "C" __global__ void skinny_fwd_p##P(const float* x, SK_FWD_ARGS) {                                        \
        skinny_fwd_t<P, true>(x, nP, cap, w, in, out, y, acc);                                                       \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P(const float* x,                           \
                                                                            SK_WGRAD_ARGS) {                         \
        skinny_wgrad_t<P, true>(x, dy, nP, cap, in, out, partial, chunkRows);                                        \
    }                                                                                                                \
    extern "C" __global__ void skinny_fwd_p##P##_v1(const float* x, SK_FWD_ARGS) {                                   \
        skinny_fwd_t<P, false>(x, nP, cap, w, in, out, y, acc);                                                      \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P##_v1(const float* x,                      \
                                                                            SK_WGRAD_ARGS) {                         \
        skinny_wgrad_t<P, false>(x, dy, nP, cap, in, out, partial, chunkRows);                                       \
    }                                                                                                                \
    extern "C" __global__ void skinny_fwd_p##P##_bf16(const unsigned short* x, SK_FWD_ARGS) {                        \
        skinny_fwd_t<P, true>(x, nP, cap, w, in, out, y, acc);                                                       \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P##_bf16(const unsigned short* x,           \
                                                                            SK_WGRAD_ARGS) {                         \
        skinny_wgrad_t<P, true>(x, dy, nP, cap, in, out, partial, chunkRows);                                        \
    }                                                                                                                \
    extern "C" __global__ void skinny_fwd_p##P##_bf16_v1(const unsigned short* x, SK_FWD_ARGS) {                     \
        skinny_fwd_t<P, false>(x, nP, cap, w, in, out, y, acc);                                                      \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(256, 4) skinny_wgrad_p##P##_bf16_v1(const unsigned short* x,        \
                                                                            SK_WGRAD_ARGS) {                         \
        skinny_wgrad_t<P, false>(x, dy, nP, cap, in, out, partial, chunkRows);                                       \
    }

SK_KERNELS(1)
SK_KERNELS(2)
SK_KERNELS(4)
SK_KERNELS(8)
