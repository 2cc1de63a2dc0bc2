// dense.cu: fused bias + ReLU + dropout and its backward.
//
// Forward, element (row, col) of live rows (x and y float32 or bfloat16:
// xbf16, ybf16): v = x + bias[col] (when bias),
// v = max(v, 0) when relu (NaN stays), and with dropout the element is kept
// iff word col%4 of Philox(row, col/4, step, epoch<<8|stream) >= thr; kept
// values are multiplied by scale = 1/(1-p) (computed on the host in float32
// like the CPU backend), dropped ones are 0, and mask records 1 where the
// gradient passes (kept and, with relu, positive: y > 0), else 0. One warp
// per row, one lane per group of four columns (one Philox call; no
// division to find the row); 16-byte loads and stores when vec is set
// (dim % 4 == 0, aligned addresses, bias's too).
//
// Backward: dx = dy * mask * scale with dropout (the mask holds the ReLU's
// gate, so y is not read), else dy * [y > 0 when relu], on live rows
// (written as bfloat16 when dxbf16: then dx must not overlap dy), and
// dbias = column sums of dx before rounding, deterministic: bias_act_dropout_bwd(4) writes
// one partial sum per (chunk of chunkRows rows, column), column_sums adds
// the partials of live chunks in a fixed order in float64.
#include "common.cuh"
#include "rng.cuh"
#include "act.cuh"
#include "bf16.cuh"

extern "C" __global__ void bias_act_dropout(const float* x, const int* nP, int cap, int dim, const float* bias,
                                            int relu, int dropout, u32 thr, float scale, u32 k0, u32 k1,
                                            const int* clock, u32 stream, const int* keys, unsigned char* mask, float* y, int vec,
                                            int ybf16, int xbf16) {
    int n = live_count(nP, cap);
    int groups = (dim + 3) >> 2;
    u32 step = 0, hi = 0;
    if (dropout) {
        step = (u32)clock[1];
        hi = rand_hi(clock, stream);
    }
    int lane = lane_id();
    for (int row = gwarp(); row < n; row += gwarps()) {
        u32 key = keys ? (u32)keys[row] : (u32)row;
        for (int g = lane; g < groups; g += 32) {
            int c0 = g * 4;
            i64 base = (i64)row * dim + c0;
            float v[4] = {0.f, 0.f, 0.f, 0.f};
            int m = min(4, dim - c0);
            if (vec) {
                float4 xv = load_as((const float4*)x, base >> 2, xbf16); // vec: base is a multiple of 4
                v[0] = xv.x, v[1] = xv.y, v[2] = xv.z, v[3] = xv.w;
            } else {
                for (int k = 0; k < m; k++)
                    v[k] = load_as(x, base + k, xbf16);
            }
            if (bias && vec) { // one 16-byte load (vec: bias is aligned too)
                float4 bv = *(const float4*)(bias + c0);
                v[0] += bv.x, v[1] += bv.y, v[2] += bv.z, v[3] += bv.w;
            } else if (bias) {
                for (int k = 0; k < m; k++) v[k] += bias[c0 + k];
            }
            act_store4(v, m, base, g, relu, dropout, thr, scale, key, step, hi, k0, k1, mask, y, vec, ybf16);
        }
    }
}

// bias_act_dropout_bwd: grid (ceil(dim/32), ceil(cap/chunkRows)), block
// (32, 8): thread (x, y) of block (bx, by) handles column 32*bx + x and rows
// r0 + y, r0 + y + 8, ... of chunk by. partial (may be null) is [chunks, dim].
extern "C" __global__ void bias_act_dropout_bwd(const float* dy, const float* y, const int* nP, int cap, int dim,
                                                int relu, int dropout, float scale, const unsigned char* mask,
                                                float* dx, float* partial, int chunkRows, int ybf16, int dxbf16) {
    __shared__ float red[8][33];
    int n = live_count(nP, cap);
    int c = blockIdx.x * 32 + threadIdx.x;
    int r0 = blockIdx.y * chunkRows;
    if (r0 >= n) return;
    int r1 = min(r0 + chunkRows, n);
    float s = 0.f;
    if (c < dim) {
        for (int r = r0 + threadIdx.y; r < r1; r += 8) {
            i64 idx = (i64)r * dim + c;
            float g = dy[idx];
            if (dropout) g = mask[idx] ? g * scale : 0.f;
            else if (relu && !(load_as(y, idx, ybf16) > 0.f)) g = 0.f;
            store_as(dx, idx, g, dxbf16);
            s += g;
        }
    }
    if (partial == 0) return;
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < dim) {
        float t = 0.f;
#pragma unroll
        for (int k = 0; k < 8; k++) t += red[k][threadIdx.x];
        partial[(i64)blockIdx.y * dim + c] = t;
    }
}

// bias_act_dropout_bwd4: bias_act_dropout_bwd over 16-byte words (dim % 4
// == 0, aligned addresses): grid (ceil(dim/128), chunks), block (32, 8);
// thread x handles columns 4*(32*bx + x) .. +3. Each thread adds its rows in
// the same order as bias_act_dropout_bwd, so partial is bitwise the same.
// Two rows are loaded before either is stored (dx may alias dy).
extern "C" __global__ void bias_act_dropout_bwd4(const float4* dy, const float4* y, const int* nP, int cap, int dim,
                                                 int relu, int dropout, float scale, const uchar4* mask, float4* dx,
                                                 float* partial, int chunkRows, int ybf16, int dxbf16) {
    __shared__ float4 red[8][33];
    int n = live_count(nP, cap);
    int words = dim >> 2;
    int c = blockIdx.x * 32 + threadIdx.x;
    int r0 = blockIdx.y * chunkRows;
    if (r0 >= n) return;
    int r1 = min(r0 + chunkRows, n);
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    const uchar4 one = make_uchar4(1, 1, 1, 1);
    if (c < words) {
        for (int r = r0 + threadIdx.y; r < r1; r += 16) {
            bool two = r + 8 < r1;
            i64 ia = (i64)r * words + c, ib = ia + 8 * (i64)words;
            float4 ga = dy[ia], gb = two ? dy[ib] : zero;
            float4 ya = relu && !dropout ? load_as(y, ia, ybf16) : zero, yb = relu && !dropout && two ? load_as(y, ib, ybf16) : zero;
            uchar4 ma = dropout ? mask[ia] : one, mb = dropout && two ? mask[ib] : one;
            ga = bwd_elem4(ga, ya, ma, relu, dropout, scale);
            store_as(dx, ia, ga, dxbf16);
            s.x += ga.x, s.y += ga.y, s.z += ga.z, s.w += ga.w;
            if (two) {
                gb = bwd_elem4(gb, yb, mb, relu, dropout, scale);
                store_as(dx, ib, gb, dxbf16);
                s.x += gb.x, s.y += gb.y, s.z += gb.z, s.w += gb.w;
            }
        }
    }
    if (partial == 0) return;
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < words) {
        float4 t = zero;
#pragma unroll
        for (int k = 0; k < 8; k++) {
            float4 v = red[k][threadIdx.x];
            t.x += v.x, t.y += v.y, t.z += v.z, t.w += v.w;
        }
        *(float4*)(partial + (i64)blockIdx.y * dim + 4 * c) = t;
    }
}

// column_sums: out[c] = sum over live chunks b of partial[b, c] in float64.
// Grid (ceil(dim/32), sums), block (32, COLSUM_Y): thread (x, y) adds chunks
// y, y + COLSUM_Y, ... of column 32*bx + x in order, then the COLSUM_Y sums
// are added in order of y: a fixed order, so the result is deterministic.
// Blocks of blockIdx.y 1 do the same for a second set of sums (partial2,
// nP2, cap2, out2; the chunks and width the first set's), so that two sums
// take one launch.
#define COLSUM_Y 32
extern "C" __global__ void column_sums(const float* partial, const int* nP, int cap, int chunkRows, int dim,
                                       float* out, const float* partial2, const int* nP2, int cap2, float* out2) {
    __shared__ double red[COLSUM_Y][33];
    if (blockIdx.y == 1) partial = partial2, nP = nP2, cap = cap2, out = out2;
    int n = live_count(nP, cap);
    int chunks = (n + chunkRows - 1) / chunkRows;
    int c = blockIdx.x * 32 + threadIdx.x;
    double s = 0.0;
    if (c < dim) {
        int b = threadIdx.y;
        for (; b + 3 * COLSUM_Y < chunks; b += 4 * COLSUM_Y) {
            float v0 = partial[(i64)b * dim + c], v1 = partial[(i64)(b + COLSUM_Y) * dim + c];
            float v2 = partial[(i64)(b + 2 * COLSUM_Y) * dim + c], v3 = partial[(i64)(b + 3 * COLSUM_Y) * dim + c];
            s += v0;
            s += v1;
            s += v2;
            s += v3;
        }
        for (; b < chunks; b += COLSUM_Y) s += partial[(i64)b * dim + c];
    }
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < dim) {
        double t = 0.0;
#pragma unroll
        for (int k = 0; k < COLSUM_Y; k++) t += red[k][threadIdx.x];
        out[c] = (float)t;
    }
}
