// util.cu: small kernels: fills, count arithmetic and the padding rows of capacity GEMMs.
#include "common.cuh"
#include "bf16.cuh"

// fill_u64: p[i] = v for i < n (8-byte fill; 4- and 1-byte fills use memset).
extern "C" __global__ void fill_u64(u64* p, i64 n, u64 v) {
    for (i64 i = gtid(); i < n; i += gthreads()) p[i] = v;
}

// add_count: *c += delta, unless the optional flag *unless is non-zero.
extern "C" __global__ void add_count(int* c, int delta, const int* unless) {
    if (gtid() == 0 && (unless == 0 || *unless == 0)) *c += delta;
}

// pad_regions: for each region k < rs.count, a float32 matrix [cap, cols]
// at p whose padding rows [live, cap) (live = *nP, clamped) are saved to,
// zeroed in or restored from the stash s (padding element i at s[i]):
//   PAD_SAVE s = p; PAD_SAVE_ZERO s = p, p = 0; PAD_ZERO p = 0; PAD_RESTORE p = s.
// Lets a GEMM run over the whole capacity as if over live rows only (see
// pad.go). Regions of one launch must not overlap. 16-byte words when vec
// (cols % 4 == 0, p and s 16-byte aligned).
#define PAD_MAX 4
#define PAD_SAVE 1
#define PAD_SAVE_ZERO 2
#define PAD_ZERO 3
#define PAD_RESTORE 4

struct PadRegion {
    float* p;
    float* s;
    const int* nP;
    int cols, cap, mode, vec;
};

struct PadRegions {
    PadRegion r[PAD_MAX];
    int count;
};
// pad.go lays these out by hand.
typedef char pad_regions_layout_check[(sizeof(PadRegion) == 40 && sizeof(PadRegions) == 168) ? 1 : -1];

template <typename V>
__device__ __forceinline__ void pad_apply(V* p, V* s, i64 total, int mode, V zero) {
    for (i64 i = gtid(); i < total; i += gthreads()) {
        if (mode == PAD_RESTORE) {
            p[i] = s[i];
        } else if (mode == PAD_ZERO) {
            p[i] = zero;
        } else {
            s[i] = p[i];
            if (mode == PAD_SAVE_ZERO) p[i] = zero;
        }
    }
}

extern "C" __global__ void pad_regions(PadRegions rs) {
    for (int k = 0; k < rs.count && k < PAD_MAX; k++) {
        PadRegion r = rs.r[k];
        int n = live_count(r.nP, r.cap);
        i64 base = (i64)n * r.cols, total = (i64)(r.cap - n) * r.cols;
        if (r.vec)
            pad_apply<float4>((float4*)(r.p + base), (float4*)r.s, total >> 2, r.mode, make_float4(0.f, 0.f, 0.f, 0.f));
        else
            pad_apply<float>(r.p + base, r.s, total, r.mode, 0.f);
    }
}

// masked_copy: dst[r, :] = src[r, :] for rows r < live (*nP, clamped) and 0
// for live <= r < cap: a summed GEMM input with zero padding rows, for
// inputs that alias each other (see pad.go).
extern "C" __global__ void masked_copy(const float* src, float* dst, const int* nP, int cols, int cap) {
    i64 live = (i64)live_count(nP, cap) * cols, total = (i64)cap * cols;
    for (i64 i = gtid(); i < total; i += gthreads()) dst[i] = i < live ? src[i] : 0.f;
}

// convert: y[i] = x[i] for i < n, each float32 or bfloat16 (xbf16, ybf16):
// to bfloat16 rounds to nearest even, to float32 widens exactly.
extern "C" __global__ void convert(const void* x, void* y, i64 n, int xbf16, int ybf16) {
    for (i64 i = gtid(); i < n; i += gthreads()) {
        store_as((float*)y, i, load_as((const float*)x, i, xbf16), ybf16);
    }
}
