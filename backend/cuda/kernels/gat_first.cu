// gat_first.cu: the ops of a GAT layer that aggregates before it projects
// (SharedAggregate and its coefficient backward; HeadLinear's products are
// cuBLAS's, or under TF32x3 the tensor-core kernels' over block_diag's
// expansion),
// the twins of backend/cpu/gat_first.go; the coefficient layout as in
// gat.cu.
//
// shared_agg and shared_agg_bwd take the shapes the register kernels below
// (more than 8 heads or 128 columns) do not.
// shared_agg: one warp per destination; the lanes take the row's columns
// (lane + 32·q, SA_NC of them per pass), and SA_HC heads are summed per pass
// from the one source row read. float32 sums: the self loop's product
// (__fmul_rn), then fmaf per edge in order.
// shared_agg_bwd: one warp per destination; per position and head the lanes
// add dout·x over their columns in float64 in column order, then a xor
// butterfly (warp_sum_d; the same order for a given shape); the heads reread
// the source row, from L1.
// bip (a bipartite block): no self loop; bf16: x holds bfloat16 bits,
// widened as read; half: the aggregate (shared_agg's out, shared_agg_bwd's
// dout) is bfloat16, each float32 sum rounded once as stored, dout widened
// as read; vec (the register kernels'): in is a multiple of 4 and x and the
// aggregate are aligned to 4 elements, so that a lane reads and writes its
// four columns at once.
#include "common.cuh"
#include "bf16.cuh"
#include "block.cuh"
#include "gat.cuh"
#include "vec.cuh"

#define SA_NC 4
#define SA_HC 8

#define SA_ARGS                                                                                                   \
    const int *indptr, const int *indices, const int *nDstP, int dstCap, const int *nEP, int edgeCap,            \
        const int *nSrcP, int srcCap, int bip, int bf16, int half, int vec, int heads, int in

// shared_agg_pass adds, for destination i, heads [hb, hb+SA_HC) and columns
// [cb, cb+32·SA_NC) of the lane, the self loop and the edges in order, and
// stores them.
__device__ __forceinline__ void shared_agg_pass(const int* indices, int dstCap, int ns, int bip, int bf16, int half,
                                                int heads, int in, int i, int e0, int e1, int hb, int cb, const float* coef,
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
    i64 o = (i64)i * heads * in;
#pragma unroll
    for (int t = 0; t < SA_HC; t++) {
        if (hb + t >= heads) break;
#pragma unroll
        for (int q = 0; q < SA_NC; q++) {
            int c = cb + q * 32 + lane;
            if (c < in) store_as(out, o + (i64)(hb + t) * in + c, acc[t][q], half);
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
                shared_agg_pass(indices, dstCap, bc.ns, bip, bf16, half, heads, in, i, e0, e1, hb, cb, coef, x, out);
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
        i64 d = (i64)i * heads * in;
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
                    s = vdot_d(load_as(dout, d + (i64)h * in + c, half), load_as(x, (i64)j * in + c, bf16), s);
                s = warp_sum_d(s);
                if (lane == 0) dcoef[row * heads + h] = (float)s;
            }
        }
    }
}

// The register kernels, shared_agg_h{1,2,4,8} and shared_agg_bwd_h{1,2,4,8},
// take heads <= HP (a power of two) and in <= 128 (GAT's usual bottom
// layers, which the kernels above read a row at a time): one warp per
// destination, each lane over four adjacent columns (4·lane..4·lane+3: one
// 16-byte load of float32 or 8-byte load of bfloat16 a row where vec: in a
// multiple of 4 and the operands so aligned; else one element at a time)
// and every head at once. The sources of 32 positions load one a lane
// (att_sources), and the rows of SA_U positions are loaded before any is
// used, so that several are in flight.
//   Forward: the same float32 operations as shared_agg, in the same order
//   (bit for bit equal).
//   Backward: the destination's dout row stays in registers; per position
//   every lane adds its columns' products per head in float32 (fmaf, in
//   column order), then the sums of a few positions (every head of each)
//   are reduced over the warp together (sa_reduce; one order for a given
//   HP). float32, not float64 as the general kernel: half the registers
//   (twice the warps in flight on the row loads it waits on) and no
//   conversions.
#define SA_U 4

// sa_quad is columns [c0, c0+4) of the row at element at of p (bfloat16
// bits when bf16), widened, 0 past in: one load where vec, else one a
// column.
__device__ __forceinline__ float4 sa_quad(const float* p, i64 at, int c0, int in, int bf16, int vec) {
    if (vec) return c0 < in ? load_as((const float4*)p, (at + c0) >> 2, bf16) : make_float4(0.f, 0.f, 0.f, 0.f);
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) v[k] = c0 + k < in ? load_as(p, at + c0 + k, bf16) : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

// sa_rows loads positions [u0, u0+U) of a chunk of cnt positions whose
// sources are jl (one a lane): their sources (-1 past cnt) and the lane's
// columns of their rows (0 where there is none).
template <int U>
__device__ __forceinline__ void sa_rows(int jl, int u0, int cnt, int in, int bf16, int vec, const float* x,
                                        int (&jj)[U], float4 (&xv)[U]) {
    int c0 = 4 * lane_id();
#pragma unroll
    for (int u = 0; u < U; u++) {
        jj[u] = __shfl_sync(FULL_MASK, jl, (u0 + u) & 31);
        if (u0 + u >= cnt) jj[u] = -1;
        xv[u] = jj[u] >= 0 ? sa_quad(x, (i64)jj[u] * in, c0, in, bf16, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

template <int HP>
__device__ __forceinline__ void shared_agg_regs(const int* indices, BlockCounts bc, const int* indptr, int dstCap,
                                                int bip, int bf16, int half, int vec, int heads, int in,
                                                const float* coef, const float* x, float* out) {
    int c0 = 4 * lane_id();
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        int np = 1 + e1 - e0;
        float acc[HP][4];
#pragma unroll
        for (int t = 0; t < HP; t++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[t][q] = 0.f;
        for (int pb = 0; pb < np; pb += 32) {
            int jl = att_sources(indices, i, e0, pb, np, bc.ns, bip);
            int cnt = min(32, np - pb);
            for (int u0 = 0; u0 < cnt; u0 += SA_U) {
                int jj[SA_U];
                float4 xv[SA_U];
                sa_rows<SA_U>(jl, u0, cnt, in, bf16, vec, x, jj, xv);
#pragma unroll
                for (int u = 0; u < SA_U; u++) {
                    if (jj[u] < 0) continue;
                    int k = pb + u0 + u;
                    const float* cr = coef + att_row(i, e0, k, dstCap) * heads;
#pragma unroll
                    for (int t = 0; t < HP; t++) {
                        float cf = t < heads ? cr[t] : 0.f;
#pragma unroll
                        for (int q = 0; q < 4; q++)
                            acc[t][q] = k == 0 ? __fmul_rn(cf, vcomp(xv[u], q)) : fmaf(cf, vcomp(xv[u], q), acc[t][q]);
                    }
                }
            }
        }
        i64 o = (i64)i * heads * in;
#pragma unroll
        for (int t = 0; t < HP; t++) {
            if (t >= heads) break;
            i64 at = o + (i64)t * in + c0;
            if (vec) {
                if (c0 < in) store_as((float4*)out, at >> 2, make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]), half);
                continue;
            }
#pragma unroll
            for (int q = 0; q < 4; q++)
                if (c0 + q < in) store_as(out, at + q, acc[t][q], half);
        }
    }
}

// sa_reduce sums every s[v] (v < V, a power of two up to 32: a lane's
// partial sums, of type T) over the warp: after it, s[0] of lane l holds the whole sum
// of the value it returns, the same on each of the 32/V lanes that hold that
// value. Each halving step keeps half the values and adds the partner's
// other half (the exchanges of a step are independent); a xor butterfly
// over the lanes left ends it: V - 1 + 5 - log2(V) shuffles for V sums,
// where a warp sum each takes 5·V.
// SaHalve<T, N> takes the halving steps from N values on (N a power of two,
// at o the lane bit of the first), then the butterfly; a template per N,
// so that every index into the sums is a constant and they stay in
// registers.
template <typename T, int N>
struct SaHalve {
    static __device__ __forceinline__ void run(T* s, int lane, int o, int* v) {
        bool up = (lane & o) != 0;
#pragma unroll
        for (int t = 0; t < N / 2; t++) {
            T send = up ? s[t] : s[t + N / 2];
            T keep = up ? s[t + N / 2] : s[t];
            s[t] = keep + __shfl_xor_sync(FULL_MASK, send, o);
        }
        if (up) *v += N / 2;
        SaHalve<T, N / 2>::run(s, lane, o >> 1, v);
    }
};

template <typename T>
struct SaHalve<T, 1> {
    static __device__ __forceinline__ void run(T* s, int lane, int o, int* v) {
        for (; o > 0; o >>= 1) s[0] += __shfl_xor_sync(FULL_MASK, s[0], o);
    }
};

template <typename T, int V>
__device__ __forceinline__ int sa_reduce(T (&s)[V]) {
    int v = 0;
    SaHalve<T, V>::run(s, lane_id(), 16, &v);
    return v;
}

// The backward's positions per batch (SA_BU) and sums per reduction
// (SA_BV): HP·SA_BU sums in reductions of at most 8 (16 with 8 heads).
#define SA_BU(HP) ((HP) >= 4 ? 4 : 8 / (HP))
#define SA_BV(HP) ((HP) >= 8 ? 16 : 8)

template <int HP>
__device__ __forceinline__ void shared_agg_bwd_regs(const int* indices, BlockCounts bc, const int* indptr, int dstCap,
                                                    int bip, int bf16, int half, int vec, int heads, int in,
                                                    const float* x, const float* dout, float* dcoef) {
    const int U = SA_BU(HP), V = SA_BV(HP), UR = V / HP;  // UR positions per reduction
    int lane = lane_id(), c0 = 4 * lane;
    bool writer = (lane & (32 / V - 1)) == 0;
    for (int i = gwarp(); i < bc.n; i += gwarps()) {
        int e0, e1;
        edge_range(indptr, i, bc.ne, &e0, &e1);
        int np = 1 + e1 - e0;
        float4 d[HP];
#pragma unroll
        for (int t = 0; t < HP; t++)
            d[t] = t < heads ? sa_quad(dout, ((i64)i * heads + t) * in, c0, in, half, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
        for (int pb = 0; pb < np; pb += 32) {
            int jl = att_sources(indices, i, e0, pb, np, bc.ns, bip);
            int cnt = min(32, np - pb);
            for (int u0 = 0; u0 < cnt; u0 += U) {
                int jj[U];
                float4 xv[U];
                sa_rows<U>(jl, u0, cnt, in, bf16, vec, x, jj, xv);
#pragma unroll
                for (int ub = 0; ub < U; ub += UR) {
                    float s[V];
#pragma unroll
                    for (int r = 0; r < UR; r++)
#pragma unroll
                        for (int t = 0; t < HP; t++) {
                            float4 xr = xv[ub + r];
                            float a = fmaf(d[t].x, xr.x, 0.f);
                            a = fmaf(d[t].y, xr.y, a);
                            a = fmaf(d[t].z, xr.z, a);
                            s[r * HP + t] = fmaf(d[t].w, xr.w, a);
                        }
                    int v = sa_reduce(s);
                    int u = ub + v / HP, h = v % HP;
                    if (writer && h < heads && u0 + u < cnt)
                        dcoef[att_row(i, e0, pb + u0 + u, dstCap) * heads + h] = s[0];
                }
            }
        }
    }
}

#define SA_REGS(HP)                                                                                              \
    extern "C" __global__ void shared_agg_h##HP(SA_ARGS, const float* coef, const float* x, float* out) {        \
        shared_agg_regs<HP>(indices, block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap), indptr, dstCap,   \
                            bip, bf16, half, vec, heads, in, coef, x, out);                                                 \
    }                                                                                                            \
    extern "C" __global__ void shared_agg_bwd_h##HP(SA_ARGS, const float* x, const float* dout, float* dcoef) {  \
        shared_agg_bwd_regs<HP>(indices, block_counts(nDstP, dstCap, nEP, edgeCap, nSrcP, srcCap), indptr,      \
                                dstCap, bip, bf16, half, vec, heads, in, x, dout, dcoef);                                   \
    }

SA_REGS(1)
SA_REGS(2)
SA_REGS(4)
SA_REGS(8)

// block_diag, block_diag_bwd: HeadLinear's products under TF32x3 or over
// bfloat16 operands (gat_first.go's blockDiag), a thread per element
// (copies).
// block_diag: wbd[h·in+f, g·dim+c] = w[f, g·dim+c] when g == h, else 0 (w
// and wbd bfloat16 bits when bf16).
extern "C" __global__ void block_diag(const float* w, int in, int heads, int dim, int bf16, float* wbd) {
    i64 wd = (i64)heads * dim, n = (i64)heads * in * wd;
    for (i64 t = gtid(); t < n; t += gthreads()) {
        i64 r = t / wd, col = t % wd;
        int h = (int)(r / in), f = (int)(r % in);
        store_as(wbd, t, col / dim == h ? load_as(w, (i64)f * wd + col, bf16) : 0.f, bf16);
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

// head_wgrad_sum: HeadLinear's weight gradient from its split products,
// a thread per element: dw[f, h·dim+c] = Σ_p part[p, h, f, c] (parts p in
// order; part [parts][heads][in][dim], the products of the row chunks),
// then + x[r, h·in+f]·dy[r, h·dim+c] for the rows r in [r0, r1) the chunks
// left, in order.
extern "C" __global__ void head_wgrad_sum(const float* part, int parts, const float* x, const float* dy, int r0,
                                          int r1, int in, int heads, int dim, float* dw) {
    i64 wd = (i64)heads * dim, n = (i64)in * wd, hin = (i64)heads * in, stride = hin * dim;
    for (i64 t = gtid(); t < n; t += gthreads()) {
        i64 f = t / wd, col = t % wd;
        i64 h = col / dim, c = col % dim;
        const float* src = part + (h * in + f) * dim + c;
        float s = src[0];
        for (int p = 1; p < parts; p++) s += src[p * stride];
        for (int r = r0; r < r1; r++) s = fmaf(x[(i64)r * hin + h * in + f], dy[(i64)r * wd + col], s);
        dw[t] = s;
    }
}
