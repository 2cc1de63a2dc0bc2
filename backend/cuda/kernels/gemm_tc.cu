// gemm_tc.cu: the Linear ops' row-major float32 products on tensor cores,
// with the live row count read on the device:
//
//   C(m, n) (+)= sum_k A(m, k) * B(k, n)
//
// The products are 3xTF32: each input x is split into big = tf32(x) and small = tf32(x - big),
// and a*b is computed as a_small*b_big + a_big*b_small + a_big*b_big, all
// accumulated in float32: about float32's accuracy (the dropped small*small
// term and the small parts' rounding are near 2^-22 of the product).
//
// gemm_tc_nt3: C [live rows, N] (+)= A·Bᵀ, the rows of C and A past
//   the live count *nP neither read nor written. A is row-major [rows, K]
//   (lda), B is [N, K] (ldb): both keep k contiguous, which lets the
//   fragments load 16 bytes at a time (stage_nt). The forward product x·w
//   runs as x·(wᵀ)ᵀ after transpose_f32 writes wᵀ. Grid (row tiles at
//   capacity, column tiles); blocks whose rows lie past the live count
//   return at once.
// gemm_tc_wgrad3: the weight gradient, summed over the live rows: A(m, k)
//   = x[k*lda + m] (x [rows, M]), B(k, n) = dy[k*ldb + n] (dy [rows, N]).
//   The rows are cut into fixed slices of `slice` rows (grid.z); each block
//   writes the partial product of one slice and tile to
//   partial[slice][M][N], and gemm_tc_reduce adds the live slices in order
//   (in float64). Slices do not depend on the capacity, so the result is
//   the same whatever the capacity.
//
// Tiles of 128 x 128 outputs and 32 k per stage, TC_STAGES stages filled with
// cp.async (16 bytes, zero-filled past the edges); 8 warps, each 64 x 32
// outputs as 4 x 4 mma.m16n8k8 tiles. Requirements (checked on the host):
// K, N, lda, ldb, M (wgrad) multiples of 4 and 16-byte aligned pointers.
#include "common.cuh"
#include "vec.cuh"

#define TC_BM 128
#define TC_BN 128
#define TC_BK 32
#define TC_STAGES 2  // 3 and 4 measured no faster
#define TC_MINB 1  // blocks per multiprocessor the registers must allow (2: 128 registers, measured slower)
#define TC_THREADS 256
#define TC_PADR 4  // row-major (k contiguous) tiles: [128][32 + 4]
#define TC_PADK 8  // k-major tiles: [32][128 + 8]
#define TC_CHUNKS (TC_BM * TC_BK / 4 / TC_THREADS)  // 16-byte copies per thread and operand

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u32 r;
    asm("{ .reg .u64 u; cvta.to.shared.u64 u, %1; cvt.u32.u64 %0, u; }\n" : "=r"(r) : "l"(p));
    return r;
}

// cp16 copies 16 bytes from global src to shared dst, or writes zeros when
// !valid (src is then not read).
__device__ __forceinline__ void cp16(void* dst, const void* src, bool valid) {
    int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ u32 to_tf32(float x) {
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// split writes x's TF32 big part and its small part.
__device__ __forceinline__ void split(float x, u32& big, u32& small) {
    big = to_tf32(x);
    small = to_tf32(x - __uint_as_float(big));
}

__device__ __forceinline__ void mma(float* d, const u32* a, const u32* b) {
    asm(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Shared tiles of one stage. A: row-major As[m][k] (AROW) or k-major
// As[k][m]; B: k-major Bs[k][n] (BROW) or n-major Bs[n][k]. The paddings
// make the fragment loads below free of bank conflicts.
template <bool AROW, bool BROW>
struct TcStage {
    float a[AROW ? TC_BM * (TC_BK + TC_PADR) : TC_BK * (TC_BM + TC_PADK)];
    float b[BROW ? TC_BK * (TC_BN + TC_PADK) : TC_BN * (TC_BK + TC_PADR)];
    __device__ __forceinline__ float A(int m, int k) const {
        return AROW ? a[m * (TC_BK + TC_PADR) + k] : a[k * (TC_BM + TC_PADK) + m];
    }
    __device__ __forceinline__ float B(int k, int n) const {
        return BROW ? b[k * (TC_BN + TC_PADK) + n] : b[n * (TC_BK + TC_PADR) + k];
    }
};

// chunk_rows copies 16-byte chunk q of a tile of 128 rows [r0, r0 + 128)
// (valid below rEnd), each with k [k0, k0 + BK) contiguous (valid below
// kEnd), to dst [128][BK + PADR].
__device__ __forceinline__ void chunk_rows(float* dst, const float* src, int ld, int r0, int rEnd, int k0, int kEnd,
                                           int q) {
    int r = q >> 3, kc = (q & 7) * 4;
    bool ok = r0 + r < rEnd && k0 + kc < kEnd;
    cp16(&dst[r * (TC_BK + TC_PADR) + kc], ok ? src + (i64)(r0 + r) * ld + k0 + kc : src, ok);
}

// chunk_krows copies 16-byte chunk q of a tile of BK rows k [k0, k0 + BK)
// (valid below kEnd), each with 128 contiguous columns [c0, c0 + 128) (valid
// below cEnd), to dst [BK][128 + PADK] (the tiles are 128 wide: TC_BM ==
// TC_BN).
__device__ __forceinline__ void chunk_krows(float* dst, const float* src, int ld, int c0, int cEnd, int k0, int kEnd,
                                            int q) {
    int k = q >> 5, cc = (q & 31) * 4;
    bool ok = k0 + k < kEnd && c0 + cc < cEnd;
    cp16(&dst[k * (TC_BM + TC_PADK) + cc], ok ? src + (i64)(k0 + k) * ld + c0 + cc : src, ok);
}

// load_tile starts the copies of one stage: A rows [m0, m0 + BM) (valid
// below mEnd) and k [k0, k0 + BK) (valid below kEnd), B likewise with
// columns [n0, n0 + BN) (valid below nEnd). 1024 16-byte chunks per
// operand, four per thread.
template <bool AROW, bool BROW>
__device__ __forceinline__ void load_tile(TcStage<AROW, BROW>& s, const float* a, int lda, const float* b, int ldb,
                                          int m0, int mEnd, int n0, int nEnd, int k0, int kEnd) {
#pragma unroll
    for (int r = 0; r < TC_CHUNKS; r++) {
        int q = threadIdx.x + r * TC_THREADS;
        if (AROW)
            chunk_rows(s.a, a, lda, m0, mEnd, k0, kEnd, q);
        else
            chunk_krows(s.a, a, lda, m0, mEnd, k0, kEnd, q);
        if (BROW)
            chunk_krows(s.b, b, ldb, n0, nEnd, k0, kEnd, q);
        else
            chunk_rows(s.b, b, ldb, n0, nEnd, k0, kEnd, q);
    }
}

// mma_all issues one k-step's products of a warp's 4 x 4 tiles: one pass
// per product term, small terms first; within a pass the 16 products are
// independent, so they issue back to back.
__device__ __forceinline__ void mma_all(float acc[4][4][4], u32 ab[4][4], u32 as[4][4], u32 bb[4][2], u32 bs[4][2]) {
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mma(acc[i][j], as[i], bb[j]);
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mma(acc[i][j], ab[i], bs[j]);
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mma(acc[i][j], ab[i], bb[j]);
}

// stage_any multiplies one stage with one shared load per fragment value.
template <bool AROW, bool BROW>
__device__ __forceinline__ void stage_any(const TcStage<AROW, BROW>& s, float acc[4][4][4], int wm, int wn, int g,
                                          int t) {
#pragma unroll
    for (int kk = 0; kk < TC_BK; kk += 8) {
        u32 ab[4][4], as[4][4], bb[4][2], bs[4][2];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int m = wm + i * 16 + g;
            split(s.A(m, kk + t), ab[i][0], as[i][0]);
            split(s.A(m + 8, kk + t), ab[i][1], as[i][1]);
            split(s.A(m, kk + t + 4), ab[i][2], as[i][2]);
            split(s.A(m + 8, kk + t + 4), ab[i][3], as[i][3]);
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int n = wn + j * 8 + g;
            split(s.B(kk + t, n), bb[j][0], bs[j][0]);
            split(s.B(kk + t + 4, n), bb[j][1], bs[j][1]);
        }
        mma_all(acc, ab, as, bb, bs);
    }
}

// stage_nt multiplies one stage whose operands both keep k contiguous (A
// row-major, B n-major) with 16-byte shared loads. The stage's k are
// permuted the same way for A and B (a sum over k does not care): in k-step
// s, fragment position t + 4h holds k = 8t + 2s + h, so a thread's values
// of one row for the whole stage are 8 consecutive floats.
__device__ __forceinline__ void stage_nt(const TcStage<true, false>& s, float acc[4][4][4], int wm, int wn, int g,
                                         int t) {
    const int ld = TC_BK + TC_PADR;
#pragma unroll
    for (int q = 0; q < 2; q++) {
        float4 av[4][2], bv[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int m = wm + i * 16 + g;
            av[i][0] = *(const float4*)&s.a[m * ld + 8 * t + 4 * q];
            av[i][1] = *(const float4*)&s.a[(m + 8) * ld + 8 * t + 4 * q];
        }
#pragma unroll
        for (int j = 0; j < 4; j++) bv[j] = *(const float4*)&s.b[(wn + j * 8 + g) * ld + 8 * t + 4 * q];
#pragma unroll
        for (int e = 0; e < 2; e++) {
            u32 ab[4][4], as[4][4], bb[4][2], bs[4][2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                split(vcomp(av[i][0], 2 * e), ab[i][0], as[i][0]);
                split(vcomp(av[i][1], 2 * e), ab[i][1], as[i][1]);
                split(vcomp(av[i][0], 2 * e + 1), ab[i][2], as[i][2]);
                split(vcomp(av[i][1], 2 * e + 1), ab[i][3], as[i][3]);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                split(vcomp(bv[j], 2 * e), bb[j][0], bs[j][0]);
                split(vcomp(bv[j], 2 * e + 1), bb[j][1], bs[j][1]);
            }
            mma_all(acc, ab, as, bb, bs);
        }
    }
}

// tc_block computes the block's 128 x 128 tile over k in [kBegin, kEnd)
// into acc (each thread: 4 x 4 fragments of 4 values). The stages live in
// dynamic shared memory (TC_STAGES * sizeof(TcStage), set by the host).
template <bool AROW, bool BROW>
__device__ __forceinline__ void tc_block(const float* a, int lda, const float* b, int ldb, int m0, int mEnd, int n0,
                                         int nEnd, int kBegin, int kEnd, float acc[4][4][4]) {
    extern __shared__ float4 tc_smem[];
    TcStage<AROW, BROW>* st = (TcStage<AROW, BROW>*)tc_smem;
    int lane = lane_id(), warp = threadIdx.x >> 5;
    int wm = (warp & 1) * 64, wn = (warp >> 1) * 32;
    int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int v = 0; v < 4; v++) acc[i][j][v] = 0.f;
    int tiles = (kEnd - kBegin + TC_BK - 1) / TC_BK;
    if (tiles <= 0) return;
    // TC_STAGES - 1 tiles in flight: one commit group per tile (empty past
    // the last), so that waiting until TC_STAGES - 2 groups are pending
    // means tile kt has landed. The slot refilled in iteration kt was read
    // in iteration kt - 1, which every thread left at the barrier.
#pragma unroll
    for (int p = 0; p < TC_STAGES - 1; p++) {
        if (p < tiles) load_tile(st[p], a, lda, b, ldb, m0, mEnd, n0, nEnd, kBegin + p * TC_BK, kEnd);
        cp_commit();
    }
    for (int kt = 0; kt < tiles; kt++) {
        cp_wait<TC_STAGES - 2>();
        __syncthreads();
        int next = kt + TC_STAGES - 1;
        if (next < tiles)
            load_tile(st[next % TC_STAGES], a, lda, b, ldb, m0, mEnd, n0, nEnd, kBegin + next * TC_BK, kEnd);
        cp_commit();
        if (AROW && !BROW)
            stage_nt((const TcStage<true, false>&)st[kt % TC_STAGES], acc, wm, wn, g, t);
        else
            stage_any<AROW, BROW>(st[kt % TC_STAGES], acc, wm, wn, g, t);
    }
    cp_wait<0>();
    __syncthreads();  // the shared tiles are free again (none pending)
}

// store_tile writes (or adds, when accumulate) the block's tile to c [.., ldc]
// for rows below mEnd and columns below nEnd (two columns at a time: N is a
// multiple of 4).
__device__ __forceinline__ void store_tile(float acc[4][4][4], float* c, int ldc, int m0, int mEnd, int n0, int nEnd,
                                           int accumulate) {
    int lane = lane_id(), warp = threadIdx.x >> 5;
    int wm = (warp & 1) * 64, wn = (warp >> 1) * 32;
    int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int n = n0 + wn + j * 8 + 2 * t;
            if (n >= nEnd) continue;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int m = m0 + wm + i * 16 + g + 8 * h;
                if (m >= mEnd) continue;
                float2* p = (float2*)(c + (i64)m * ldc + n);
                float2 v = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                if (accumulate) {
                    float2 o = *p;
                    v.x += o.x;
                    v.y += o.y;
                }
                *p = v;
            }
        }
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, TC_MINB)
    gemm_tc_nt3(const float* a, const float* b, float* c, const int* nP, int capM, int N, int K, int lda, int ldb,
                int ldc, int accumulate) {
    int mEnd = live_count(nP, capM);
    int m0 = blockIdx.x * TC_BM, n0 = blockIdx.y * TC_BN;
    if (m0 >= mEnd) return;
    float acc[4][4][4];
    tc_block<true, false>(a, lda, b, ldb, m0, mEnd, n0, N, 0, K, acc);
    store_tile(acc, c, ldc, m0, mEnd, n0, N, accumulate);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, TC_MINB)
    gemm_tc_wgrad3(const float* x, const float* dy, float* partial, const int* nP, int capK, int M, int N, int slice) {
    int kLive = live_count(nP, capK);
    int k0 = blockIdx.z * slice;
    if (k0 >= kLive) return;
    int m0 = blockIdx.x * TC_BM, n0 = blockIdx.y * TC_BN;
    float acc[4][4][4];
    tc_block<false, true>(x, M, dy, N, m0, M, n0, N, k0, min(k0 + slice, kLive), acc);
    store_tile(acc, partial + (i64)blockIdx.z * M * N, N, m0, M, n0, N, 0);
}

// gemm_tc_reduce: dw[i] = (dw[i] when accumulate) + sum over the live slices
// s of partial[s][i], in order of s, in float64, rounded once.
extern "C" __global__ void gemm_tc_reduce(const float* partial, const int* nP, int capK, int slice, int MN, float* dw,
                                          int accumulate) {
    int kLive = live_count(nP, capK);
    int slices = (kLive + slice - 1) / slice;
    for (i64 i = gtid(); i < MN; i += gthreads()) {
        double s = 0.0;
        for (int k = 0; k < slices; k++) s += (double)partial[(i64)k * MN + i];
        if (accumulate) s += (double)dw[i];
        dw[i] = (float)s;
    }
}

// transpose_f32: dst [cols, rows] = src [rows, cols]ᵀ, through 32 x 32
// shared tiles; block (32, 8), grid (ceil(cols/32), ceil(rows/32)).
extern "C" __global__ void transpose_f32(const float* src, int rows, int cols, float* dst) {
    __shared__ float tile[32][33];
    int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * 32;
    for (int y = threadIdx.y; y < 32; y += 8)
        if (r0 + y < rows && c < cols) tile[y][threadIdx.x] = src[(i64)(r0 + y) * cols + c];
    __syncthreads();
    int r = r0 + threadIdx.x, c0 = blockIdx.x * 32;
    for (int y = threadIdx.y; y < 32; y += 8)
        if (c0 + y < cols && r < rows) dst[(i64)(c0 + y) * rows + r] = tile[threadIdx.x][y];
}
