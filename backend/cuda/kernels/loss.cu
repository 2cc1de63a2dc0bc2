// loss.cu: softmax cross-entropy with on-device mean loss and correct count,
// and argmax. One warp per row; a block of LOSS_WARPS warps handles rows
// [LOSS_WARPS*b, LOSS_WARPS*(b+1)). Per-block partials are added in a fixed
// order by the block that finishes last (a ticket counter it clears again),
// so the loss is bitwise deterministic in one launch. Arithmetic
// follows the CPU backend: float64 exp/log, argmax = first index of the
// largest non-NaN value (0 when all are NaN).
#include "common.cuh"

#define LOSS_WARPS 8

// better reports whether (v, j) beats (bv, bj) for argmax.
__device__ __forceinline__ bool better(float v, int j, float bv, int bj) {
    bool vn = v != v, bn = bv != bv;
    if (vn != bn) return bn;
    if (!vn && v != bv) return v > bv;
    return j < bj;
}

// row_argmax: warp-wide argmax of x[0, classes).
__device__ __forceinline__ int row_argmax(const float* x, int classes) {
    int lane = lane_id();
    float bv = __int_as_float(0x7fc00000);
    int bj = INT32_MAX_;
    for (int j = lane; j < classes; j += 32) {
        float v = x[j];
        if (better(v, j, bv, bj)) bv = v, bj = j;
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        float ov = __shfl_xor_sync(FULL_MASK, bv, d);
        int oj = __shfl_xor_sync(FULL_MASK, bj, d);
        if (better(ov, oj, bv, bj)) bv = ov, bj = oj;
    }
    return bj;
}

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL_MASK, v, d);
    return v;
}

// FINISH_SLOTS: the partials are added in FINISH_SLOTS strided running
// sums (slot t adds blocks t, t + FINISH_SLOTS, ...), then a tree over the
// slots.
#define FINISH_SLOTS 1024

// finish_sums adds the live blocks' partials in the fixed order above;
// every thread of the block calls it, and thread 0 writes the results.
__device__ __forceinline__ void finish_sums(const double* partLoss, const int* partHits, int blocks, int den,
                                            float* loss, int* correct) {
    __shared__ double sl[FINISH_SLOTS];
    __shared__ int sh[FINISH_SLOTS];
    for (int t = threadIdx.x; t < FINISH_SLOTS; t += blockDim.x) {
        double s = 0.0;
        int h = 0;
        for (int b = t; b < blocks; b += FINISH_SLOTS) s += __ldcg(partLoss + b), h += __ldcg(partHits + b);
        sl[t] = s;
        sh[t] = h;
    }
    __syncthreads();
    for (int d = FINISH_SLOTS / 2; d > 0; d >>= 1) {
        for (int t = threadIdx.x; t < d; t += blockDim.x) {
            sl[t] += sl[t + d];
            sh[t] += sh[t + d];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *loss = (float)(sl[0] * (1.0 / (double)(den > 1 ? den : 1)));
        *correct = sh[0];
    }
}

// softmax_xent: each block writes its rows' gradients and its partial loss
// and hits; the last block to finish (ticket, zero between launches) adds
// the partials: loss = total / max(den, 1), correct = hits.
extern "C" __global__ void __launch_bounds__(LOSS_WARPS * 32)
softmax_xent(const float* logits, const int* labels, const int* nP, int cap, const int* denP, int denCap, int classes,
             float* dlogits, double* partLoss, int* partHits, int* err, int* ticket, float* loss, int* correct) {
    __shared__ double wl[LOSS_WARPS];
    __shared__ int wh[LOSS_WARPS];
    __shared__ bool last;
    int n = live_count(nP, cap);
    int den = live_count(denP, denCap);
    int w = threadIdx.x >> 5, lane = lane_id();
    int row = blockIdx.x * LOSS_WARPS + w;
    double l = 0.0;
    int hit = 0;
    if (row < n) {
        const float* x = logits + (i64)row * classes;
        float* g = dlogits + (i64)row * classes;
        int y = labels[row];
        if (y >= classes) {
            if (lane == 0) report_error(err, ERR_LABEL, row, y, classes);
            y = -1;
        }
        if (y < 0) {
            for (int j = lane; j < classes; j += 32) g[j] = 0.f;
        } else {
            double inv = 1.0 / (double)(den > 1 ? den : 1);
            int best = row_argmax(x, classes);
            double mx = (double)x[best], sum = 0.0;
            for (int j = lane; j < classes; j += 32) sum += exp((double)x[j] - mx);
            double logSum = log(warp_sum_d(sum));
            for (int j = lane; j < classes; j += 32) {
                double gj = exp((double)x[j] - mx - logSum) * inv;
                if (j == y) gj -= inv;
                g[j] = (float)gj;
            }
            l = logSum + mx - (double)x[y];
            hit = best == y;
        }
    }
    if (lane == 0) {
        wl[w] = l;
        wh[w] = hit;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (blockIdx.x * LOSS_WARPS < n) {
            double s = 0.0;
            int h = 0;
            for (int k = 0; k < LOSS_WARPS; k++) s += wl[k], h += wh[k];
            partLoss[blockIdx.x] = s;
            partHits[blockIdx.x] = h;
        }
        __threadfence();
        last = atomicAdd(ticket, 1) == (int)gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    finish_sums(partLoss, partHits, (n + LOSS_WARPS - 1) / LOSS_WARPS, den, loss, correct);
    if (threadIdx.x == 0) *ticket = 0;
}

// argmax_rows: out[i] = argmax of row i for live rows.
extern "C" __global__ void argmax_rows(const float* logits, const int* nP, int cap, int classes, int* out) {
    int n = live_count(nP, cap);
    for (int i = gwarp(); i < n; i += gwarps()) {
        int b = row_argmax(logits + (i64)i * classes, classes);
        if (lane_id() == 0) out[i] = b;
    }
}
