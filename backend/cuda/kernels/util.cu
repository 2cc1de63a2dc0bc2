// util.cu: small kernels: fills, count arithmetic and zeroing of padding rows.
#include "common.cuh"

// fill_u64: p[i] = v for i < n (8-byte fill; 4- and 1-byte fills use memset).
extern "C" __global__ void fill_u64(u64* p, i64 n, u64 v) {
    for (i64 i = gtid(); i < n; i += gthreads()) p[i] = v;
}

// add_count: *c += delta, unless the optional flag *unless is non-zero.
extern "C" __global__ void add_count(int* c, int delta, const int* unless) {
    if (gtid() == 0 && (unless == 0 || *unless == 0)) *c += delta;
}

// pad_stash: padding rows [live, cap) of a [cap, colsA] and b [cap, colsB]
// (b may be null; a and b must not overlap). restore == 0: copy them to the
// stash s (a's rows from s[0], b's from s[cap * colsA]) and zero them;
// restore != 0: copy them back. Lets a GEMM run over the whole capacity
// while only live rows contribute, without changing its inputs.
extern "C" __global__ void pad_stash(float* a, int colsA, float* b, int colsB, const int* nP, int cap, float* s,
                                     int restore) {
    int n = live_count(nP, cap);
    i64 padA = (i64)(cap - n) * colsA, padB = b ? (i64)(cap - n) * colsB : 0;
    float* a0 = a + (i64)n * colsA;
    float* b0 = b ? b + (i64)n * colsB : 0;
    float* sb = s + (i64)cap * colsA;
    for (i64 i = gtid(); i < padA + padB; i += gthreads()) {
        float* p = i < padA ? a0 + i : b0 + (i - padA);
        float* q = i < padA ? s + i : sb + (i - padA);
        if (restore) {
            *p = *q;
        } else {
            *q = *p;
            *p = 0.0f;
        }
    }
}
