// gat_first.cu: the ops of a GAT layer that aggregates before it projects
// (SharedAggregate, its coefficient backward, BlockDiag and its backward),
// the twins of backend/cpu/gat_first.go; the coefficient layout as in
// gat.cu.
//
// shared_agg: one warp per destination; the lanes take the row's columns
// (lane + 32·q, SA_NC of them per pass), and SA_HC heads are summed per pass
// from the one source row read: with in <= 128 and heads <= 8 (GAT's usual
// bottom layers) every source row is read once per position. float32 sums:
// the self loop's product (__fmul_rn), then fmaf per edge in order.
// shared_agg_bwd: one warp per destination; per position and head the lanes
// add dout·x over their columns in float64 in column order, then a xor
// butterfly (warp_sum_d; the same order for a given shape); the heads reread
// the source row, from L1.
// block_diag, block_diag_bwd: a thread per element (copies).
// bip (a bipartite block): no self loop; bf16: x holds bfloat16 bits,
// widened as read.
#include "common.cuh"
#include "bf16.cuh"
#include "block.cuh"
#include "gat.cuh"

#define SA_NC 4
#define SA_HC 8

#define SA_ARGS                                                                                                   \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,            \
        const int *nSrcP, int srcCap, int bip, int bf16, int heads, int in

// shared_agg_pass adds, for destination i, heads [hb, hb+SA_HC) and columns
// [cb, cb+32·SA_NC) of the lane, the self loop and the edges in order, and
// stores them.
__device__ __forceinline__ void shared_agg_pass(const int* indices, int dstCap, int ns, int bip, int bf16, int heads,
                                                int in, int i, int e0, int e1, int hb, int cb, const float* coef,
                                                const float* x, float* out) {
    int lane = lane_id();
    float acc[SA_HC][SA_NC];
    float xv[SA_NC];
#pragma unroll
    for (int q = 0; q < SA_NC; q++) {
        int c = cb + q * 32 + lane;
        xv[q] = c < in && !bip ? load_as(x, (i64)i * in + c, bf16) : 0.f;
    }
#pragma unroll
    for (int t = 0; t < SA_HC; t++) {
        float cs = hb + t < heads && !bip ? coef[(i64)i * heads + hb + t] : 0.f;
#pragma unroll
        for (int q = 0; q < SA_NC; q++) acc[t][q] = __fmul_rn(cs, xv[q]);
    }
    for (int e = e0; e < e1; e++) {
        int j = indices[e];
        if (j < 0 || j >= ns) continue;
#pragma unroll
        for (int q = 0; q < SA_NC; q++) {
            int c = cb + q * 32 + lane;
            xv[q] = c < in ? load_as(x, (i64)j * in + c, bf16) : 0.f;
        }
        const float* ce = coef + ((i64)dstCap + e) * heads;
#pragma unroll
        for (int t = 0; t < SA_HC; t++) {
            float cf = hb + t < heads ? ce[hb + t] : 0.f;
#pragma unroll
            for (int q = 0; q < SA_NC; q++) acc[t][q] = fmaf(cf, xv[q], acc[t][q]);
        }
    }
    float* o = out + (i64)i * heads * in;
#pragma unroll
    for (int t = 0; t < SA_HC; t++) {
        if (hb + t >= heads) break;
#pragma unroll
        for (int q = 0; q < SA_NC; q++) {
            int c = cb + q * 32 + lane;
            if (c < in) o[(i64)(hb + t) * in + c] = acc[t][q];
        }
    }
}

extern "C" __global__ void shared_agg(SA_ARGS, const float* coef, const float* x, float* out) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        for (int hb = 0; hb < heads; hb += SA_HC)
            for (int cb = 0; cb < in; cb += 32 * SA_NC)
                shared_agg_pass(indices, dstCap, bc.ns, bip, bf16, heads, in, i, e0, e1, hb, cb, coef, x, out);
    }
}

// shared_agg_bwd: dcoef of every live position of the live destinations (0
// where the position has no live source).
extern "C" __global__ void shared_agg_bwd(SA_ARGS, const float* x, const float* dout, float* dcoef) {
    BlockCounts bc = block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap);
    int lane = lane_id();
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        const float* d = dout + (i64)i * heads * in;
        for (int k = 0; k <= e1 - e0; k++) {
            int j = att_src(indices, i, e0, k, bc.ns, bip);
            i64 row = att_row(i, e0, k, dstCap);
            if (j < 0) {
                for (int h = lane; h < heads; h += 32) dcoef[row * heads + h] = 0.f;
                continue;
            }
            for (int h = 0; h < heads; h++) {
                double s = 0;
                for (int c = lane; c < in; c += 32)
                    s = vdot_d(d[(i64)h * in + c], load_as(x, (i64)j * in + c, bf16), s);
                s = warp_sum_d(s);
                if (lane == 0) dcoef[row * heads + h] = (float)s;
            }
        }
    }
}

// block_diag: wbd[h·in+f, g·dim+c] = w[f, g·dim+c] when g == h, else 0.
extern "C" __global__ void block_diag(const float* w, int in, int heads, int dim, float* wbd) {
    i64 wd = (i64)heads * dim, n = (i64)heads * in * wd;
    for (i64 t = gtid(); t < n; t += gthreads()) {
        i64 r = t / wd, col = t % wd;
        int h = (int)(r / in), f = (int)(r % in);
        wbd[t] = col / dim == h ? w[(i64)f * wd + col] : 0.f;
    }
}

// block_diag_bwd: dw[f, h·dim+c] = dwbd[h·in+f, h·dim+c].
extern "C" __global__ void block_diag_bwd(const float* dwbd, int in, int heads, int dim, float* dw) {
    i64 wd = (i64)heads * dim, n = (i64)in * wd;
    for (i64 t = gtid(); t < n; t += gthreads()) {
        i64 f = t / wd, col = t % wd;
        i64 h = col / dim;
        dw[t] = dwbd[(h * in + f) * wd + col];
    }
}
