// dense.cu: fused bias + ReLU + dropout and its backward.
//
// Forward, element (row, col) of live rows: v = x + bias[col] (when bias),
// v = max(v, 0) when relu (NaN stays), and with dropout the element is kept
// iff word col%4 of Philox(row, col/4, step, epoch<<8|stream) >= thr; kept
// values are multiplied by scale = 1/(1-p) (computed on the host in float32
// like the CPU backend), dropped ones are 0, and mask records 1/0. One thread
// per group of four columns (one Philox call); 16-byte loads and stores when
// vec is set (dim % 4 == 0, aligned addresses).
//
// Backward: dx = dy * mask * scale * [y > 0 when relu] on live rows, and
// dbias = column sums of dx, deterministic: bias_act_dropout_bwd writes one
// partial sum per (chunk of chunkRows rows, column), column_sums adds the
// partials of live chunks in chunk order in float64.
#include "common.cuh"
#include "rng.cuh"

extern "C" __global__ void bias_act_dropout(const float* x, const int* nP, int cap, int dim, const float* bias,
                                            int relu, int dropout, u32 thr, float scale, u32 k0, u32 k1,
                                            const int* clock, u32 stream, unsigned char* mask, float* y, int vec) {
    int n = live_count(nP, cap);
    int groups = (dim + 3) >> 2;
    i64 total = (i64)n * groups;
    u32 step = 0, hi = 0;
    if (dropout) {
        step = (u32)clock[1];
        hi = rand_hi(clock, stream);
    }
    bool small = total < 0x7fffffff;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int row = small ? (int)((u32)t / (u32)groups) : (int)(t / groups);
        int g = (int)(t - (i64)row * groups), c0 = g * 4;
        i64 base = (i64)row * dim + c0;
        float v[4] = {0.f, 0.f, 0.f, 0.f};
        int m = min(4, dim - c0);
        if (vec) {
            float4 xv = *(const float4*)(x + base);
            v[0] = xv.x, v[1] = xv.y, v[2] = xv.z, v[3] = xv.w;
        } else {
            for (int k = 0; k < m; k++) v[k] = x[base + k];
        }
        uint4 w = make_uint4(0u, 0u, 0u, 0u);
        if (dropout) w = philox4x32_10(make_uint4((u32)row, (u32)g, step, hi), k0, k1);
        unsigned char keep[4] = {1, 1, 1, 1};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (bias && k < m) v[k] += bias[c0 + k];
            if (relu && v[k] < 0.f) v[k] = 0.f;
            if (dropout) {
                keep[k] = philox_word(w, k) >= thr;
                v[k] = keep[k] ? v[k] * scale : 0.f;
            }
        }
        if (vec) {
            *(float4*)(y + base) = make_float4(v[0], v[1], v[2], v[3]);
            if (dropout) *(uchar4*)(mask + base) = make_uchar4(keep[0], keep[1], keep[2], keep[3]);
        } else {
            for (int k = 0; k < m; k++) {
                y[base + k] = v[k];
                if (dropout) mask[base + k] = keep[k];
            }
        }
    }
}

// bias_act_dropout_bwd: grid (ceil(dim/32), ceil(cap/chunkRows)), block
// (32, 8). partial (may be null) is [chunks, dim].
extern "C" __global__ void bias_act_dropout_bwd(const float* dy, const float* y, const int* nP, int cap, int dim,
                                                int relu, int dropout, float scale, const unsigned char* mask,
                                                float* dx, float* partial, int chunkRows) {
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
            if (relu && !(y[idx] > 0.f)) g = 0.f;
            dx[idx] = g;
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

// column_sums: out[c] = sum over live chunks b of partial[b, c], in order.
extern "C" __global__ void column_sums(const float* partial, const int* nP, int cap, int chunkRows, int dim,
                                       float* out) {
    int n = live_count(nP, cap);
    int chunks = (n + chunkRows - 1) / chunkRows;
    for (i64 c = gtid(); c < dim; c += gthreads()) {
        double s = 0.0;
        for (int b = 0; b < chunks; b++) s += partial[(i64)b * dim + c];
        out[c] = (float)s;
    }
}
