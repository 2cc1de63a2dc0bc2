// norm.cu: batch and layer normalisation (backend.Norm). Column statistics
// and column sums run over chunks of rows as well as columns: block (32,
// NORM_Y) of grid (ceil(dim/32), chunks), thread (x, y) of block (bx, by)
// takes column 32*bx + x and rows y, y + NORM_Y, ... of chunk by in order,
// in float64; the NORM_Y sums are added in a fixed order into one float64
// partial per (chunk, column) in scratch; norm_fold then adds the live
// chunks' partials of a column in a fixed order (thread y of a column takes
// chunks y, y + NORM_Y, ...). The order depends on the live count and the
// chunk's rows only, so every run gives the same bits. Row statistics: one
// warp per row, float64 lane sums reduced by a fixed butterfly.
// Per-element work: grid-stride loops.
#include "common.cuh"
#include "act.cuh"

#define NORM_Y 16

// NORM_ACT is the activation after a normalisation that its backward
// passes dy through first (NormBackward's act): its output ay (read with
// relu and no dropout) and its mask (read with dropout); relu 0 and
// dropout 0: none.
#define NORM_ACT const float *ay, const unsigned char *amask, int relu, int dropout, float scale

// norm_g is element t of dy passed back through the activation, as
// bias_act_dropout_bwd passes it (bwd_elem).
__device__ __forceinline__ float norm_g(const float* dy, i64 t, NORM_ACT) {
    float g = dy[t];
    if (!relu && !dropout) return g;
    return bwd_elem(g, relu && !dropout ? ay[t] : 0.f, dropout ? amask[t] : (unsigned char)0, relu, dropout, scale);
}

// col_reduce adds v over the block's NORM_Y row groups of one column;
// every thread of the column gets the total.
__device__ __forceinline__ double col_reduce(double v, double* sh) {
    sh[threadIdx.y * 32 + threadIdx.x] = v;
    __syncthreads();
    double s = 0.0;
    for (int k = 0; k < NORM_Y; k++) s += sh[k * 32 + threadIdx.x];
    __syncthreads();
    return s;
}

__device__ __forceinline__ float norm_rstd(double v, float eps) { return (float)(1.0 / sqrt(v + (double)eps)); }

// chunk_rows is chunk by's rows [*r0, *r1) of the n live ones; false when
// it holds none (the whole block returns).
__device__ __forceinline__ bool chunk_rows(int n, int chunkRows, int* r0, int* r1) {
    i64 lo = (i64)blockIdx.y * chunkRows;
    if (lo >= n) return false;
    *r0 = (int)lo;
    *r1 = (int)min((i64)n, lo + chunkRows);
    return true;
}

// norm_part: part[by, j] = Σ a[i, j] over chunk by's live rows i (column
// sums: a bias's gradient).
extern "C" __global__ void norm_part(const float* a, const int* nP, int cap, int dim, int chunkRows, double* part) {
    __shared__ double sh[NORM_Y * 32];
    int r0, r1;
    if (!chunk_rows(live_count(nP, cap), chunkRows, &r0, &r1)) return;
    int j = blockIdx.x * 32 + threadIdx.x;
    bool col = j < dim;
    double s = 0.0;
    if (col)
        for (int i = r0 + threadIdx.y; i < r1; i += NORM_Y) s += (double)a[(i64)i * dim + j];
    s = col_reduce(s, sh);
    if (col && threadIdx.y == 0) part[(i64)blockIdx.y * dim + j] = s;
}

// norm_moments_part: batch normalisation's statistics in one pass over
// x: with d = x[i, j] - x[0, j] (the first live row shifts every column,
// so that the squares do not swamp the spread), part[by, j] = Σ d and
// part[by, dim + j] = Σ d² over chunk by's live rows (part [chunks,
// 2·dim]). With bias, x[i, j] is a[i, j] + bias[j] (one float add, as
// bias_act_dropout's), written to pre (which may be a).
extern "C" __global__ void norm_moments_part(const float* a, const float* bias, float* pre, const int* nP, int cap,
                                             int dim, int chunkRows, double* part) {
    __shared__ double sh[NORM_Y * 32];
    int r0, r1;
    if (!chunk_rows(live_count(nP, cap), chunkRows, &r0, &r1)) return;
    int j = blockIdx.x * 32 + threadIdx.x;
    bool col = j < dim;
    double s = 0.0, q = 0.0;
    if (col) {
        float b = bias != 0 ? bias[j] : 0.f;
        double k = (double)(bias != 0 ? a[j] + b : a[j]);
        for (int i = r0 + threadIdx.y; i < r1; i += NORM_Y) {
            i64 t = (i64)i * dim + j;
            float v = a[t];
            if (bias != 0) {
                v = v + b;
                pre[t] = v;
            }
            double d = (double)v - k;
            s += d;
            q += d * d;
        }
    }
    s = col_reduce(s, sh);
    q = col_reduce(q, sh);
    if (col && threadIdx.y == 0) {
        part[(i64)blockIdx.y * 2 * dim + j] = s;
        part[(i64)blockIdx.y * 2 * dim + dim + j] = q;
    }
}

// norm_moments_fold: the live chunks' partials of norm_moments_part
// added in norm_fold's order, then stats[j] = x[0, j] + S/n and stats[dim
// + j] = max(Q/n - (S/n)², 0) (both 0 without live rows).
extern "C" __global__ void norm_moments_fold(const float* a, const double* part, const int* nP, int cap,
                                             int chunkRows, int dim, float* stats) {
    __shared__ double sh[NORM_Y * 32];
    int n = live_count(nP, cap);
    int chunks = (n + chunkRows - 1) / chunkRows;
    int j = blockIdx.x * 32 + threadIdx.x;
    bool col = j < dim;
    double s = 0.0, q = 0.0;
    if (col)
        for (int b = threadIdx.y; b < chunks; b += NORM_Y) {
            s += part[(i64)b * 2 * dim + j];
            q += part[(i64)b * 2 * dim + dim + j];
        }
    s = col_reduce(s, sh);
    q = col_reduce(q, sh);
    if (!col || threadIdx.y != 0) return;
    if (n == 0) {
        stats[j] = 0.0f;
        stats[dim + j] = 0.0f;
        return;
    }
    double m = s / n;
    stats[j] = (float)((double)a[j] + m);
    stats[dim + j] = (float)fmax(q / n - m * m, 0.0);
}

// norm_fold: s_j = Σ over the live chunks b of part[b, j] (part [chunks,
// width]), thread y of column j adding chunks y, y + NORM_Y, ... in order,
// then the NORM_Y sums in order. Writes s_j, divided by the live count
// (0 with none) when mean is set, as float to out[j] (j < half) or
// out2[j - half], and as double to dout[j] when dout is set.
extern "C" __global__ void norm_fold(const double* part, const int* nP, int cap, int chunkRows, int width, int half,
                                     int mean, float* out, float* out2, double* dout) {
    __shared__ double sh[NORM_Y * 32];
    int n = live_count(nP, cap);
    int chunks = (n + chunkRows - 1) / chunkRows;
    int j = blockIdx.x * 32 + threadIdx.x;
    bool col = j < width;
    double s = 0.0;
    if (col)
        for (int b = threadIdx.y; b < chunks; b += NORM_Y) s += part[(i64)b * width + j];
    s = col_reduce(s, sh);
    if (!col || threadIdx.y != 0) return;
    if (mean) s = n > 0 ? s / n : 0.0;
    if (j < half)
        out[j] = (float)s;
    else
        out2[j - half] = (float)s;
    if (dout != 0) dout[j] = s;
}

// warp_sum adds v over a warp by a fixed butterfly (every lane gets it).
__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// row_ms writes each live row's mean and reciprocal deviation to ms[2i],
// ms[2i+1] (one warp per row).
extern "C" __global__ void norm_row_ms(const float* x, const int* nP, int cap, int dim, float eps, float* ms) {
    int n = live_count(nP, cap);
    int lane = lane_id();
    for (int i = gwarp(); i < n; i += gwarps()) {
        const float* r = x + (i64)i * dim;
        double s = 0.0;
        for (int j = lane; j < dim; j += 32) s += (double)r[j];
        double mean = warp_sum(s) / dim;
        double q = 0.0;
        for (int j = lane; j < dim; j += 32) {
            double d = (double)r[j] - mean;
            q += d * d;
        }
        q = warp_sum(q) / dim;
        if (lane == 0) {
            ms[2 * i] = (float)mean;
            ms[2 * i + 1] = norm_rstd(q, eps);
        }
    }
}

// norm_col_ms writes each column's mean and reciprocal deviation from
// stats (mean, biased variance) to ms[2j], ms[2j+1].
extern "C" __global__ void norm_col_ms(const float* stats, int dim, float eps, float* ms) {
    for (i64 j = gtid(); j < dim; j += gthreads()) {
        ms[2 * j] = stats[j];
        ms[2 * j + 1] = norm_rstd((double)stats[dim + j], eps);
    }
}

// norm_apply: v = gamma·(x - mean)·rstd + beta on the live rows, with
// (mean, rstd) ms[2k], ms[2k+1] of k = the row (perRow) or the column, then
// ReLU and dropout as bias_act_dropout's (act_store4: the same Philox words
// and mask). One warp per row, a lane per group of four columns; 16-byte
// loads and stores when vec (dim % 4 == 0, aligned x, y, mask, gamma and
// beta).
extern "C" __global__ void norm_apply(const float* x, const int* nP, int cap, int dim, int perRow, const float* ms,
                                      const float* gamma, const float* beta, int relu, int dropout, u32 thr,
                                      float scale, u32 k0, u32 k1, const int* clock, u32 stream, const int* keys,
                                      unsigned char* mask, float* y, int vec) {
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
            int c0 = g * 4, m = min(4, dim - c0);
            i64 base = (i64)row * dim + c0;
            float v[4] = {0.f, 0.f, 0.f, 0.f};
            if (vec) {
                float4 xv = *(const float4*)(x + base), gv = *(const float4*)(gamma + c0);
                float4 bv = *(const float4*)(beta + c0);
                float xs[4] = {xv.x, xv.y, xv.z, xv.w}, gs[4] = {gv.x, gv.y, gv.z, gv.w};
                float bs[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    int q = perRow ? row : c0 + k;
                    v[k] = gs[k] * ((xs[k] - ms[2 * q]) * ms[2 * q + 1]) + bs[k];
                }
            } else {
                for (int k = 0; k < m; k++) {
                    int j = c0 + k, q = perRow ? row : j;
                    v[k] = gamma[j] * ((x[base + k] - ms[2 * q]) * ms[2 * q + 1]) + beta[j];
                }
            }
            act_store4(v, m, base, g, relu, dropout, thr, scale, key, step, hi, k0, k1, mask, y, vec, 0);
        }
    }
}

// The backward kernels (norm_bwd_*) read dy through norm_g: dy passed back
// through the activation after the normalisation, where there is one.

// norm_bwd_part: part[by, j] = Σ dy·x̂ and part[by, dim + j] = Σ dy over
// chunk by's live rows (part [chunks, 2·dim]; x̂ from ms as norm_apply's).
extern "C" __global__ void norm_bwd_part(const float* x, const float* dy, const int* nP, int cap, int dim, int perRow,
                                         const float* ms, NORM_ACT, int chunkRows, double* part) {
    __shared__ double sh[NORM_Y * 32];
    int r0, r1;
    if (!chunk_rows(live_count(nP, cap), chunkRows, &r0, &r1)) return;
    int j = blockIdx.x * 32 + threadIdx.x;
    bool col = j < dim;
    double sg = 0.0, sb = 0.0;
    if (col)
        for (int i = r0 + threadIdx.y; i < r1; i += NORM_Y) {
            i64 t = (i64)i * dim + j;
            int k = perRow ? i : j;
            double d = (double)norm_g(dy, t, ay, amask, relu, dropout, scale);
            sg += d * (double)((x[t] - ms[2 * k]) * ms[2 * k + 1]);
            sb += d;
        }
    sg = col_reduce(sg, sh);
    sb = col_reduce(sb, sh);
    if (col && threadIdx.y == 0) {
        double* p = part + (i64)blockIdx.y * 2 * dim;
        p[j] = sg;
        p[dim + j] = sb;
    }
}

// norm_bwd_cols: batch normalisation's dx = gamma·rstd·(dy - dbeta/N -
// x̂·dgamma/N) on the live rows (dx may be dy); N is the live count, or
// group[0] when group is set (a group's rows: synchronised statistics).
extern "C" __global__ void norm_bwd_cols(const float* x, const float* dy, const int* nP, int cap, int dim,
                                         const float* ms, const float* gamma, const float* dgamma, const float* dbeta,
                                         const float* group, NORM_ACT, float* dx) {
    int n = live_count(nP, cap);
    i64 total = (i64)n * dim;
    float rows = group != 0 ? group[0] : (float)n;
    float inv = rows > 0.0f ? 1.0f / rows : 0.0f;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int j = (int)(t % dim);
        float r = ms[2 * j + 1];
        float xh = (x[t] - ms[2 * j]) * r;
        dx[t] = (gamma[j] * r) * (norm_g(dy, t, ay, amask, relu, dropout, scale) - dbeta[j] * inv - xh * (dgamma[j] * inv));
    }
}

// norm_bwd_rows: layer normalisation's dx = rstd·(g - mean(g) - x̂·mean(g·x̂))
// with g = gamma·dy, one warp per live row (dx may be dy).
extern "C" __global__ void norm_bwd_rows(const float* x, const float* dy, const int* nP, int cap, int dim,
                                         const float* ms, const float* gamma, NORM_ACT, float* dx) {
    int n = live_count(nP, cap);
    int lane = lane_id();
    for (int i = gwarp(); i < n; i += gwarps()) {
        i64 base = (i64)i * dim;
        float mu = ms[2 * i], r = ms[2 * i + 1];
        double s1 = 0.0, s2 = 0.0;
        for (int j = lane; j < dim; j += 32) {
            double g = (double)(gamma[j] * norm_g(dy, base + j, ay, amask, relu, dropout, scale));
            s1 += g;
            s2 += g * (double)((x[base + j] - mu) * r);
        }
        float m1 = (float)(warp_sum(s1) / dim), m2 = (float)(warp_sum(s2) / dim);
        for (int j = lane; j < dim; j += 32) {
            float xh = (x[base + j] - mu) * r;
            dx[base + j] = r * (gamma[j] * norm_g(dy, base + j, ay, amask, relu, dropout, scale) - m1 - xh * m2);
        }
    }
}

// norm_running: running = (1-m)·running + m·batch (the variance times
// n/(n-1); the mean plus bias[j] when bias is set), unless the flag is set
// or fewer than two rows are live.
extern "C" __global__ void norm_running(const float* stats, const float* bias, const int* nP, int cap, int dim,
                                        float momentum, float* running, const int* unless) {
    int n = live_count(nP, cap);
    if (flag_set(unless) || n < 2) return;
    float unbias = (float)((double)n / (double)(n - 1));
    float keep = 1.0f - momentum;
    for (i64 j = gtid(); j < dim; j += gthreads()) {
        float mean = stats[j];
        if (bias != 0) mean = mean + bias[j];
        running[j] = keep * running[j] + momentum * mean;
        running[dim + j] = keep * running[dim + j] + momentum * (stats[dim + j] * unbias);
    }
}

// norm_moments: moments = [n·μ, n·(σ² + μ²), n] from stats over n rows.
extern "C" __global__ void norm_moments(const float* stats, const int* nP, int cap, int dim, float* moments) {
    int n = live_count(nP, cap);
    for (i64 j = gtid(); j < dim; j += gthreads()) {
        double mu = (double)stats[j];
        moments[j] = (float)(n * mu);
        moments[dim + j] = (float)(n * ((double)stats[dim + j] + mu * mu));
    }
    if (gtid() == 0) moments[2 * dim] = (float)n;
}

// norm_from_moments: stats and the count from a group's summed moments.
extern "C" __global__ void norm_from_moments(const float* moments, int dim, float* stats, int* count) {
    double total = (double)moments[2 * dim];
    for (i64 j = gtid(); j < dim; j += gthreads()) {
        float mu = 0.0f, v = 0.0f;
        if (total > 0.0) {
            double m = (double)moments[j] / total;
            double q = (double)moments[dim + j] / total - m * m;
            mu = (float)m;
            v = (float)(q > 0.0 ? q : 0.0);
        }
        stats[j] = mu;
        stats[dim + j] = v;
    }
    if (gtid() == 0) *count = (int)llround(total);
}

// norm_put_count: out[0] = the live count, as a float.
extern "C" __global__ void norm_put_count(const int* nP, int cap, float* out) {
    if (gtid() == 0) out[0] = (float)live_count(nP, cap);
}
