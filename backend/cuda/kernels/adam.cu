// adam.cu: Adam as torch.optim.Adam with L2 weight decay added to the
// gradient, the step t read from device memory (1-based):
//   g = grad + wd*param; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g
//   param -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
// The bias corrections are computed in float64 like the CPU backend. While
// the optional flag *skip is non-zero nothing changes (and t is not checked:
// a skipped step never incremented it).
//
// sparse_adam steps the rows ids[:n] of a table and its moments (lazy
// Adam): a warp per named row, its lanes over the columns.
//
// adam_multi updates up to ADAM_MAX parameters in one launch: tensor k owns
// blocks [block0, block0 + ceil(n / ADAM_BLOCK_ITEMS)), each block a run of
// ADAM_BLOCK_ITEMS elements, two per thread.
#include "common.cuh"

#define ADAM_MAX 16
#define ADAM_BLOCK_ITEMS 512

struct AdamTensor {
    float* p;
    const float* g;
    float* m;
    float* v;
    i64 n, block0;
};

struct AdamTable {
    AdamTensor t[ADAM_MAX];
    int count;
};
// adam.go lays these out by hand.
typedef char adam_table_layout_check[(sizeof(AdamTensor) == 48 && sizeof(AdamTable) == 776) ? 1 : -1];

// adam_elem updates one element from its loaded values and stores them.
__device__ __forceinline__ void adam_elem(float* p, float* m, float* v, i64 i, float pi, float g, float mi0, float vi0,
                                          float lrc, float rbc2, float b1, float b2, float eps, float wd) {
    if (wd != 0.f) g += wd * pi;
    float mi = b1 * mi0 + (1.f - b1) * g;
    float vi = b2 * vi0 + (1.f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float denom = sqrtf(vi) * rbc2 + eps;
    p[i] = pi - lrc * mi / denom;
}

// scaled_lr is the learning rate lr times the schedule's factor *scale,
// where scale is set (a float32 product, as the CPU backend's).
__device__ __forceinline__ float scaled_lr(float lr, const float* scale) { return scale ? lr * *scale : lr; }

// adam_bias computes step t's bias corrections in float64, as the CPU
// backend does: lrc = lr/(1-b1^t) and rbc2 = 1/sqrt(1-b2^t).
__device__ __forceinline__ void adam_bias(int t, float lr, float b1, float b2, float* lrc, float* rbc2) {
    double bc1 = 1.0 - pow((double)b1, (double)t);
    double bc2 = 1.0 - pow((double)b2, (double)t);
    *lrc = (float)((double)lr / bc1);
    *rbc2 = (float)(1.0 / sqrt(bc2));
}

// With inc != 0 the step is *tP + inc, and the launch stores it at tP (the
// AddCount before it, fused; nothing changes while skipped): every block's
// thread 0 reads *tP and then, after a fence, draws a ticket (zero between
// launches), so the block that draws the last one writes the step after
// every read.
extern "C" __global__ void __launch_bounds__(256)
adam_multi(AdamTable tb, int* tP, float lr, float b1, float b2, float eps, float wd, const int* skip,
           const float* scale, int* err, int inc, int* ticket) {
    __shared__ float lrc, rbc2;
    __shared__ int ok;
    if (threadIdx.x == 0) {
        int t = *tP + inc;
        bool skipped = skip != 0 && *skip != 0;
        ok = t >= 1;
        if (skipped) {
            ok = 0;
        } else if (!ok) {
            if (blockIdx.x == 0) report_error(err, ERR_ADAM_STEP, t, 0, 0);
        } else {
            adam_bias(t, scaled_lr(lr, scale), b1, b2, &lrc, &rbc2);
        }
        if (inc != 0 && !skipped) {
            __threadfence(); // the read of *tP before the ticket
            if (atomicAdd(ticket, 1) == (int)gridDim.x - 1) {
                *tP = t;
                *ticket = 0;
            }
        }
    }
    __syncthreads();
    if (!ok) return;
    int k = 0;
    for (int j = 1; j < tb.count && j < ADAM_MAX; j++)
        if ((i64)blockIdx.x >= tb.t[j].block0) k = j;
    AdamTensor a = tb.t[k];
    // Two elements per thread, both loaded before either is stored (the
    // arrays may alias).
    i64 i0 = ((i64)blockIdx.x - a.block0) * ADAM_BLOCK_ITEMS + threadIdx.x, i1 = i0 + 256;
    bool h0 = i0 < a.n, h1 = i1 < a.n;
    float p0 = 0.f, g0 = 0.f, m0 = 0.f, v0 = 0.f, p1 = 0.f, g1 = 0.f, m1 = 0.f, v1 = 0.f;
    if (h0) p0 = a.p[i0], g0 = a.g[i0], m0 = a.m[i0], v0 = a.v[i0];
    if (h1) p1 = a.p[i1], g1 = a.g[i1], m1 = a.m[i1], v1 = a.v[i1];
    if (h0) adam_elem(a.p, a.m, a.v, i0, p0, g0, m0, v0, lrc, rbc2, b1, b2, eps, wd);
    if (h1) adam_elem(a.p, a.m, a.v, i1, p1, g1, m1, v1, lrc, rbc2, b1, b2, eps, wd);
}

extern "C" __global__ void __launch_bounds__(256)
sparse_adam(float* table, float* m, float* v, int dim, i64 rows, const int* ids, const int* nP, int nCap,
            const float* grad, const int* tP, float lr, float b1, float b2, float eps, float wd, const int* skip,
            const float* scale, int* err) {
    __shared__ float lrc, rbc2;
    __shared__ int ok;
    if (threadIdx.x == 0) {
        int t = *tP;
        ok = 0;
        if (!flag_set(skip)) {
            if (t < 1) {
                if (blockIdx.x == 0) report_error(err, ERR_SPARSE_ADAM_STEP, t, 0, 0);
            } else {
                adam_bias(t, scaled_lr(lr, scale), b1, b2, &lrc, &rbc2);
                ok = 1;
            }
        }
    }
    __syncthreads();
    if (!ok) return;
    int n = live_count(nP, nCap), lane = lane_id();
    for (int i = gwarp(); i < n; i += gwarps()) {
        int id = ids[i];
        if (id < 0 || id >= rows) {
            if (lane == 0) report_error(err, ERR_SPARSE_ADAM_ROW, i, id, (int)min(rows, (i64)INT32_MAX_));
            continue;
        }
        i64 r = (i64)id * dim;
        const float* g = grad + (i64)i * dim;
        for (int f = lane; f < dim; f += 32)
            adam_elem(table, m, v, r + f, table[r + f], g[f], m[r + f], v[r + f], lrc, rbc2, b1, b2, eps, wd);
    }
}
