// steps.cu: the small ops that let a whole step run without the host (the
// replay driver captures them with the rest of the step): the seed slice of
// the step on the device clock, the overflow flag and the running sums of
// loss and correct predictions. Each reads every size from device memory.
#include "common.cuh"


// slice_seeds: s = clock[1]; start = s*batch (64-bit); live = 0 when s < 0
// or start >= n, else min(batch, n - start); out[i] = perm[start + i] for
// i < live; *count = live (written by thread 0 of block 0).
extern "C" __global__ void slice_seeds(const int* perm, i64 n, int batch, const int* clock, int* out, int* count) {
    i64 s = clock[1];
    i64 start = s * (i64)batch;
    i64 live = 0;
    if (s >= 0 && start < n) live = n - start < (i64)batch ? n - start : (i64)batch;
    for (i64 i = gtid(); i < live; i += gthreads()) out[i] = perm[start + i];
    if (gtid() == 0) *count = (int)live;
}

// flag_overflows: for each of up to FLAG_MAX counts in order, when *c[k] >
// cap[k] and flag[0] == 0, flag = {1, clock[0], clock[1]} (the queued
// FlagOverflow calls of one step). One thread.
#define FLAG_MAX 8
struct FlagCounts {
    const int* c[FLAG_MAX];
    int cap[FLAG_MAX];
    int count;
};
// steps.go lays this out by hand.
typedef char flag_counts_layout_check[sizeof(FlagCounts) == 104 ? 1 : -1];

extern "C" __global__ void flag_overflows(FlagCounts fc, const int* clock, int* flag) {
    if (gtid() != 0) return;
    for (int k = 0; k < fc.count && k < FLAG_MAX; k++) {
        if (*fc.c[k] > fc.cap[k] && flag[0] == 0) {
            flag[1] = clock[0];
            flag[2] = clock[1];
            flag[0] = 1;
        }
    }
}

// accumulate: first, when cnt is not null, *cnt += delta unless the flag
// cntUnless is set (the AddCount queued before it); then acc[0] +=
// loss[0], acc[1] += *correct (as float), unless the optional flag is set.
// One thread.
extern "C" __global__ void accumulate(const float* loss, const int* correct, float* acc, const int* unless, int* cnt,
                                      int delta, const int* cntUnless) {
    if (gtid() != 0) return;
    if (cnt != 0 && !flag_set(cntUnless)) *cnt += delta;
    if (flag_set(unless)) return;
    acc[0] += loss[0];
    acc[1] += (float)*correct;
}

// scale_share: rows [0, min(*n, cap)) of x [cap, dim] are multiplied by
// *num / *den (one rank's share of a batch split across ranks), or zeroed
// when *num or *den is 0.
extern "C" __global__ void scale_share(float* x, const int* n, int cap, int dim, const int* num, const int* den) {
    int live = *n < cap ? *n : cap;
    if (live < 0) live = 0;
    i64 total = (i64)live * dim;
    int a = *num, b = *den;
    float f = (a == 0 || b == 0) ? 0.0f : (float)((double)a / (double)b);
    for (i64 i = gtid(); i < total; i += gthreads()) x[i] = f == 0.0f ? 0.0f : x[i] * f;
}
