// jk.cu: jumping knowledge's element-wise maximum over layers
// (backend.JumpingKnowledge): one thread per element, grid-stride.
#include "common.cuh"

extern "C" __global__ void layer_max(const float* x, const int* nP, int cap, int dim, int k, int first, float* y,
                                     int* arg) {
    i64 total = (i64)live_count(nP, cap) * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        float v = x[t];
        if (first || v > y[t]) {
            y[t] = v;
            arg[t] = k;
        }
    }
}

extern "C" __global__ void layer_max_bwd(const float* dy, const int* arg, const int* nP, int cap, int dim, int k,
                                         int accumulate, float* dx) {
    i64 total = (i64)live_count(nP, cap) * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        float g = arg[t] == k ? dy[t] : 0.0f;
        dx[t] = accumulate ? dx[t] + g : g;
    }
}
